"""Lay out a workflow graph in layers: pure functions over `workflow.describe()` data.

Longest-path layering from START on the graph without its back edges (found by a depth-first
search, so loops keep a top-to-bottom reading order), then a few barycenter sweeps to reduce
crossings. The result is abstract (layer and order per node); `svg` turns it into pixels.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

START = "START"
SWEEPS = 4


@dataclass
class Layout:
    """Where each node goes: `layers[i]` lists the names in row `i`, left to right."""

    layers: list[list[str]]
    layer_of: dict[str, int]
    back_edges: set[tuple[str, str]] = field(default_factory=set)


def node_names(describe: dict[str, Any]) -> list[str]:
    """Every node name, in describe order, plus any only named by an edge."""
    names: list[str] = []
    for node in describe.get("nodes") or []:
        if node["name"] not in names:
            names.append(node["name"])
    for edge in describe.get("edges") or []:
        for end in (edge["source"], edge["target"]):
            if end not in names:
                names.append(end)
    if START in names:
        names.remove(START)
        names.insert(0, START)
    return names


def _successors(describe: dict[str, Any], names: list[str]) -> dict[str, list[str]]:
    succ: dict[str, list[str]] = {name: [] for name in names}
    for edge in describe.get("edges") or []:
        if edge["target"] not in succ[edge["source"]]:
            succ[edge["source"]].append(edge["target"])
    return succ


def _dfs(names: list[str], succ: dict[str, list[str]]) -> tuple[list[str], set[tuple[str, str]]]:
    """Return the preorder and the back edges (edges into a node still on the stack)."""
    state: dict[str, int] = {}  # 1 on the stack, 2 finished
    preorder: list[str] = []
    back: set[tuple[str, str]] = set()
    for root in names:
        if root in state:
            continue
        state[root] = 1
        preorder.append(root)
        stack = [(root, iter(succ[root]))]
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                back.add((node, child))
            elif child not in state:
                state[child] = 1
                preorder.append(child)
                stack.append((child, iter(succ[child])))
    return preorder, back


def _layers(preorder: list[str], succ: dict[str, list[str]], back: set[tuple[str, str]]) -> dict[str, int]:
    indegree = {name: 0 for name in preorder}
    for source in preorder:
        for target in succ[source]:
            if (source, target) not in back:
                indegree[target] += 1
    layer = {name: 0 for name in preorder}
    ready = [name for name in preorder if indegree[name] == 0]
    while ready:
        source = ready.pop(0)
        for target in succ[source]:
            if (source, target) in back:
                continue
            layer[target] = max(layer[target], layer[source] + 1)
            indegree[target] -= 1
            if indegree[target] == 0:
                ready.append(target)
    return layer


def _sweep(rows: list[list[str]], neighbours: dict[str, list[str]], reverse: bool) -> None:
    position: dict[str, float] = {}
    indices = range(len(rows) - 1, -1, -1) if reverse else range(len(rows))
    for i in indices:
        row = rows[i]
        current = {name: (k + 0.5) / len(row) for k, name in enumerate(row)}

        def key(name: str, current: dict[str, float] = current) -> float:
            seen = [position[n] for n in neighbours[name] if n in position]
            return sum(seen) / len(seen) if seen else current[name]

        row.sort(key=key)
        position.update({name: (k + 0.5) / len(row) for k, name in enumerate(row)})


def layout(describe: dict[str, Any]) -> Layout:
    """Assign each node a layer and an order within it."""
    names = node_names(describe)
    succ = _successors(describe, names)
    preorder, back = _dfs(names, succ)
    layer_of = _layers(preorder, succ, back)
    rows: list[list[str]] = [[] for _ in range(max(layer_of.values(), default=-1) + 1)]
    for name in preorder:
        rows[layer_of[name]].append(name)
    preds: dict[str, list[str]] = defaultdict(list)
    for source, targets in succ.items():
        for target in targets:
            if (source, target) not in back and source != target:
                preds[target].append(source)
    forward = {name: [t for t in succ[name] if (name, t) not in back] for name in names}
    for _ in range(SWEEPS):
        _sweep(rows, preds, reverse=False)
        _sweep(rows, forward, reverse=True)
    return Layout(rows, layer_of, back)


def crossings(rows: list[list[str]], edges: list[tuple[str, str]]) -> int:
    """Count crossings between adjacent layers (used by tests to check the sweeps help)."""
    where = {name: (i, k) for i, row in enumerate(rows) for k, name in enumerate(row)}
    spans = [
        (where[s][1], where[t][1], where[s][0])
        for s, t in edges
        if s in where and t in where and where[t][0] == where[s][0] + 1
    ]
    return sum(
        1
        for a, (s1, t1, l1) in enumerate(spans)
        for s2, t2, l2 in spans[a + 1 :]
        if l1 == l2 and (s1 - s2) * (t1 - t2) < 0
    )
