"""Edges and the compiled graph: chain tuples and ``Edge`` objects become one edge list."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from .errors import ConfigurationError
from .events import DEFAULT_ROUTE, Route
from .nodes import START, BaseNode, FunctionNode, JoinNode

RouteKey = tuple[type, Any]


class Edge(BaseModel):
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

    def targets(self, route: Any) -> list[BaseNode]:
        if not self.routed and self.default is None:
            return self.always
        chosen = list(self.always)
        if route is None:
            return chosen
        emitted = [route_key(r) for r in (route if isinstance(route, list) else [route])]
        matched = False
        for keys, target in self.routed:
            if any(key in keys for key in emitted):
                chosen.append(target)
                matched = True
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

    @property
    def start_targets(self) -> list[BaseNode]:
        return self.outgoing[START.name].always if START.name in self.outgoing else []


class _Wrapper:
    """Wraps bare functions in ``FunctionNode``s, one node per function object."""

    def __init__(self) -> None:
        self._made: dict[int, tuple[Any, BaseNode]] = {}

    def __call__(self, item: Any) -> BaseNode:
        if isinstance(item, BaseNode):
            return item
        if isinstance(item, str) and item == "START":
            return START
        if callable(item):
            made = self._made.get(id(item))
            if made is None:
                made = self._made[id(item)] = (item, FunctionNode(item))
            return made[1]
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
    wrap = _Wrapper()
    links: list[Link] = []
    for item in edges:
        if isinstance(item, Edge):
            links.append(Link(item.from_node, item.to_node, _normalize_routes(item.route), "Edge"))
        elif isinstance(item, tuple | list):
            links.extend(_chain(item, wrap))
        else:
            raise ConfigurationError(f"edges must hold chain tuples or Edge objects, not {item!r}")
    return links


def _group(element: Any, wrap: _Wrapper) -> list[BaseNode]:
    if isinstance(element, tuple | list):
        return [wrap(member) for member in element]
    return [wrap(element)]


def _chain(items: Sequence[Any], wrap: _Wrapper) -> list[Link]:
    links: list[Link] = []
    previous: list[BaseNode] | None = None
    for element in items:
        if isinstance(element, dict):
            if previous is None:
                raise ConfigurationError("a routing map must follow a node in a chain tuple")
            merged: dict[tuple[int, int], Link] = {}
            exits: list[BaseNode] = []
            for route, target in element.items():
                for node in _group(target, wrap):
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
            entries = _group(element, wrap)
            if previous is not None:
                links.extend(Link(source, target) for source in previous for target in entries)
            previous = entries
    return links


def compile_graph(links: list[Link]) -> Graph:
    """Index validated links for scheduling."""
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
    return Graph(links, nodes, outgoing, predecessors, terminal)


def is_join(node: BaseNode) -> bool:
    return isinstance(node, JoinNode)
