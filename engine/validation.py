"""The graph validation rules of seed 002, one check per rule, run at construction."""

from __future__ import annotations

from collections import defaultdict

from .errors import GraphValidationError
from .events import DEFAULT_ROUTE
from .graph import Link, route_key
from .nodes import START, BaseNode
from .values import is_model


def _names(nodes: list[BaseNode]) -> list[str]:
    return sorted({node.name for node in nodes})


def check_unique_names(links: list[Link]) -> None:
    """Rule 1: distinct node objects need distinct names."""
    seen: dict[str, BaseNode] = {}
    for link in links:
        for node in (link.source, link.target):
            other = seen.setdefault(node.name, node)
            if other is not node:
                raise GraphValidationError(
                    1,
                    "unique node names",
                    f"two different nodes are both named '{node.name}'; rename one, or reuse the same "
                    "node object to come back to the same step",
                    [node.name],
                )


def check_start(links: list[Link]) -> None:
    """Rule 2: START is in the graph and nothing points into it."""
    if links and not any(link.source is START for link in links):
        raise GraphValidationError(
            2, "START", "the graph has no edge from START, so it has nowhere to begin", []
        )
    into = [link.source for link in links if link.target is START]
    if into:
        raise GraphValidationError(
            2, "START", f"edges may not point into START (from {', '.join(_names(into))})", _names(into)
        )


def check_start_edges_unrouted(links: list[Link]) -> None:
    """Rule 3: edges out of START are unconditional."""
    routed = [link.target for link in links if link.source is START and link.routes]
    if routed:
        raise GraphValidationError(
            3,
            "unrouted START edges",
            f"Edges from START must not have routes (to {', '.join(_names(routed))}); "
            "put the router in a node of its own",
            _names(routed),
        )


def check_reachable(links: list[Link]) -> None:
    """Rule 4: every node is reachable from START."""
    successors: dict[int, list[BaseNode]] = defaultdict(list)
    everyone: dict[int, BaseNode] = {}
    for link in links:
        successors[id(link.source)].append(link.target)
        everyone[id(link.source)] = link.source
        everyone[id(link.target)] = link.target
    seen = {id(START)}
    stack: list[BaseNode] = [START]
    while stack:
        for nxt in successors[id(stack.pop())]:
            if id(nxt) not in seen:
                seen.add(id(nxt))
                stack.append(nxt)
    unreachable = [node for key, node in everyone.items() if key not in seen]
    if unreachable:
        raise GraphValidationError(
            4,
            "reachable from START",
            f"{', '.join(_names(unreachable))} cannot be reached from START; connect them or remove them",
            _names(unreachable),
        )


def check_no_duplicate_edges(links: list[Link]) -> None:
    """Rule 5: the same two nodes are joined once, or by edges whose routes are disjoint.

    Two edges between one pair with different routes are one conditional connection (as a
    routing map with two keys for one node is); the rule catches a copy-pasted edge: the
    same pair with the same, an overlapping or no route.
    """
    seen: dict[tuple[int, int], list[Link]] = {}
    for link in links:
        earlier = seen.setdefault((id(link.source), id(link.target)), [])
        for other in earlier:
            problem = _overlap(other, link)
            if problem:
                raise GraphValidationError(
                    5,
                    "no duplicate edges",
                    f"the edge {link.source.name} -> {link.target.name} is listed twice{problem}; "
                    "list it once, or give each edge routes of its own",
                    [link.source.name, link.target.name],
                )
        earlier.append(link)


def _overlap(first: Link, second: Link) -> str:
    """Why two edges between one pair clash ('' when their routes are disjoint)."""
    if not first.routes and not second.routes:
        return " without a route"
    if not first.routes or not second.routes:
        return ", once without a route (an unconditional edge is taken whatever the route)"
    keys = {route_key(route) for route in first.routes}
    shared = [route for route in second.routes if route_key(route) in keys]
    if shared:
        return f" with the route{'s' if len(shared) > 1 else ''} {', '.join(map(repr, shared))}"
    return ""


def check_default_routes(links: list[Link]) -> None:
    """Rule 6: at most one DEFAULT_ROUTE edge per node, never in a list with other routes."""
    defaults: dict[int, list[Link]] = defaultdict(list)
    for link in links:
        if DEFAULT_ROUTE in link.routes:
            if len(link.routes) > 1 and link.origin == "Edge":
                raise GraphValidationError(
                    6,
                    "DEFAULT_ROUTE",
                    f"the edge {link.source.name} -> {link.target.name} lists DEFAULT_ROUTE together "
                    "with other routes",
                    [link.source.name, link.target.name],
                )
            defaults[id(link.source)].append(link)
    for group in defaults.values():
        if len(group) > 1:
            source = group[0].source.name
            targets = sorted(link.target.name for link in group)
            raise GraphValidationError(
                6,
                "DEFAULT_ROUTE",
                f"node {source} has {len(group)} DEFAULT_ROUTE edges (to {', '.join(targets)}); "
                "a node may have at most one",
                [source, *targets],
            )


def check_no_unconditional_cycle(links: list[Link]) -> None:
    """Rule 7: a cycle needs at least one conditional edge to break out of it."""
    successors: dict[int, list[BaseNode]] = defaultdict(list)
    for link in links:
        if not link.routes:
            successors[id(link.source)].append(link.target)
    state: dict[int, int] = {}  # 1 on the stack, 2 done
    path: list[BaseNode] = []

    def visit(node: BaseNode) -> list[BaseNode] | None:
        state[id(node)] = 1
        path.append(node)
        for nxt in successors[id(node)]:
            mark = state.get(id(nxt))
            if mark == 1:
                return path[path.index(nxt) :]
            if mark is None:
                found = visit(nxt)
                if found:
                    return found
        path.pop()
        state[id(node)] = 2
        return None

    sources = {id(link.source): link.source for link in links}
    for key, node in sources.items():
        if key not in state:
            cycle = visit(node)
            if cycle:
                names = [n.name for n in cycle]
                raise GraphValidationError(
                    7,
                    "no unconditional cycles",
                    f"{' -> '.join([*names, names[0]])} is a cycle of unconditional edges that never "
                    "ends; make one of its edges depend on a route",
                    names,
                )


def check_schemas(links: list[Link]) -> None:
    """Rule 8: where both sides declare pydantic models, output and input schemas match."""
    for link in links:
        produced, wanted = link.source.output_type, link.target.input_type
        if is_model(produced) and is_model(wanted) and produced is not wanted:
            raise GraphValidationError(
                8,
                "matching schemas",
                f"{link.source.name} outputs {produced.__name__} but {link.target.name} takes "
                f"{wanted.__name__}",
                [link.source.name, link.target.name],
            )


def check_chat_agents(links: list[Link]) -> None:
    """Rule 9: an LLM agent in ``mode='chat'`` may only follow START."""
    for link in links:
        target = link.target
        if getattr(target, "mode", None) == "chat" and link.source is not START:
            raise GraphValidationError(
                9,
                "chat agents follow START",
                f"agent '{target.name}' has mode='chat' but follows {link.source.name}; a chat-mode agent "
                "keeps its own conversation and cannot take another node's output: put it right after "
                "START, or use mode='single_turn'",
                [target.name, link.source.name],
            )


RULES = (
    check_unique_names,
    check_start,
    check_start_edges_unrouted,
    check_reachable,
    check_no_duplicate_edges,
    check_default_routes,
    check_no_unconditional_cycle,
    check_schemas,
    check_chat_agents,
)


def validate(links: list[Link]) -> None:
    """Run every rule; the first broken one raises ``GraphValidationError``."""
    for rule in RULES:
        rule(links)
