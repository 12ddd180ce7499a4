"""Edges and the compiled graph: chain tuples and ``Edge`` objects become one edge list."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict

from .errors import ConfigurationError
from .events import DEFAULT_ROUTE, Route
from .nodes import START, BaseNode, JoinNode, as_node
from .strict import StrictModel

RouteKey = tuple[type, Any]


class Edge(StrictModel):
    """One transition, written out in full. ``from_node`` and ``to_node`` must be nodes."""

    model_config = ConfigDict(arbitrary_types_allowed=True, frozen=True)

    from_node: BaseNode
    to_node: BaseNode
    route: Route | list[Route] | None = None


@dataclass(frozen=True, slots=True)
class Link:
    """A normalized edge: source, target and its routes (empty means unconditional)."""

    source: BaseNode
    target: BaseNode
    routes: tuple[Route, ...] = ()
    origin: str = "tuple"

    @property
    def is_default(self) -> bool:
        return DEFAULT_ROUTE in self.routes


def route_key(route: Any) -> RouteKey:
    """Routes match by type and value, so ``True`` does not match ``1``."""
    return (type(route), route)


@dataclass(slots=True)
class Outgoing:
    """A node's outgoing edges, arranged for matching routes fast."""

    always: list[BaseNode] = field(default_factory=list)
    routed: list[tuple[frozenset[RouteKey], BaseNode]] = field(default_factory=list)
    default: BaseNode | None = None
    # What each str route an edge names chose (most routes are one of them); only ever read.
    # Other routes are matched every time: a route made from data must not grow this.
    chosen_by_name: dict[str, list[BaseNode]] = field(default_factory=dict)

    def targets(self, route: Any) -> list[BaseNode]:
        if not self.routed and self.default is None:
            return self.always
        if type(route) is str:
            known = self.chosen_by_name.get(route)
            if known is not None:
                return known
            chosen = self._choose(route)
            if any((str, route) in keys for keys, _ in self.routed):
                self.chosen_by_name[route] = chosen
            return chosen
        return self._choose(route)

    def _choose(self, route: Any) -> list[BaseNode]:
        chosen = list(self.always)
        if route is None:
            return chosen
        emitted = [route_key(r) for r in route] if isinstance(route, list) else [route_key(route)]
        matched = False
        for keys, target in self.routed:
            for key in emitted:
                if key in keys:
                    chosen.append(target)
                    matched = True
                    break
        if not matched and self.default is not None:
            chosen.append(self.default)
        return chosen


@dataclass
class Graph:
    """A workflow's nodes and edges, compiled once at construction."""

    links: list[Link]
    nodes: dict[str, BaseNode]
    outgoing: dict[str, Outgoing]
    predecessors: dict[str, list[str]]
    terminal: frozenset[str]
    joins: frozenset[str] = frozenset()  # the names of its join nodes

    @property
    def start_targets(self) -> list[BaseNode]:
        return self.outgoing[START.name].always if START.name in self.outgoing else []


def _as_graph_node(item: Any) -> BaseNode:
    if isinstance(item, str) and item == "START":
        return START
    if isinstance(item, BaseNode) or callable(item):
        return as_node(item)
    raise ConfigurationError(
        f"{item!r} cannot be a node: use a function, a node, START, a tuple or a routing dict"
    )


def _normalize_routes(route: Any) -> tuple[Route, ...]:
    if route is None:
        return ()
    if isinstance(route, list | tuple):
        return tuple(route)
    return (route,)


def expand(edges: Iterable[Any]) -> list[Link]:
    """Turn chain tuples and ``Edge`` objects into a flat list of links."""
    links: list[Link] = []
    for item in edges:
        if isinstance(item, Edge):
            links.append(Link(item.from_node, item.to_node, _normalize_routes(item.route), "Edge"))
        elif isinstance(item, tuple | list):
            links.extend(_chain(item))
        else:
            raise ConfigurationError(f"edges must hold chain tuples or Edge objects, not {item!r}")
    return links


def _group(element: Any) -> list[BaseNode]:
    if isinstance(element, tuple | list):
        return [_as_graph_node(member) for member in element]
    return [_as_graph_node(element)]


def _chain(items: Sequence[Any]) -> list[Link]:
    links: list[Link] = []
    previous: list[BaseNode] | None = None
    for element in items:
        if isinstance(element, dict):
            if previous is None:
                raise ConfigurationError("a routing map must follow a node in a chain tuple")
            merged: dict[tuple[int, int], Link] = {}
            exits: list[BaseNode] = []
            for route, target in element.items():
                if type(route) not in (str, int, bool):
                    raise ConfigurationError(
                        f"routing map after {', '.join(n.name for n in previous)} has the key {route!r}; "
                        "routes are strings, integers or booleans"
                    )
                for node in _group(target):
                    if node not in exits:
                        exits.append(node)
                    for source in previous:
                        key = (id(source), id(node))
                        link = merged.get(key)
                        routes = (link.routes if link else ()) + (route,)
                        merged[key] = Link(source, node, routes, "routing map")
            links.extend(merged.values())
            previous = exits
        else:
            entries = _group(element)
            if previous is not None:
                links.extend(Link(source, target) for source in previous for target in entries)
            previous = entries
    return links


def merged(links: list[Link]) -> list[Link]:
    """One link per pair of nodes: edges between one pair with disjoint routes join up."""
    by_pair: dict[tuple[int, int], Link] = {}
    for link in links:
        key = (id(link.source), id(link.target))
        first = by_pair.get(key)
        by_pair[key] = (
            link
            if first is None
            else Link(link.source, link.target, first.routes + link.routes, first.origin)
        )
    return list(by_pair.values())


def compile_graph(links: list[Link]) -> Graph:
    """Index validated links for scheduling."""
    links = merged(links)
    nodes: dict[str, BaseNode] = {}
    outgoing: dict[str, Outgoing] = {}
    predecessors: dict[str, list[str]] = {}
    for link in links:
        for node in (link.source, link.target):
            if node is not START:
                nodes.setdefault(node.name, node)
        out = outgoing.setdefault(link.source.name, Outgoing())
        plain = tuple(route for route in link.routes if route != DEFAULT_ROUTE)
        if not link.routes:
            out.always.append(link.target)
        if plain:
            out.routed.append((frozenset(route_key(r) for r in plain), link.target))
        if link.is_default:
            out.default = link.target
        preds = predecessors.setdefault(link.target.name, [])
        if link.source.name not in preds:
            preds.append(link.source.name)
    terminal = frozenset(name for name in nodes if name not in outgoing)
    joins = frozenset(name for name, node in nodes.items() if is_join(node))
    return Graph(links, nodes, outgoing, predecessors, terminal, joins)


def is_join(node: BaseNode) -> bool:
    return isinstance(node, JoinNode)
