"""Render a workflow graph as inline SVG: no JavaScript needed, no external service.

Each node is one `<g data-node="..." class="node status-...">` inside its own nested `<svg>` with
a stable id, so a live update can replace a single node with an htmx out-of-band swap (a bare
`<g>` would be parsed as HTML, a nested `<svg>` keeps the SVG namespace). Every text is
escaped here; callers may mark the result safe.

A node with more dynamic children than `MAX_CHILDREN` lists the first ones and a "+N more"
toggle; the nodes named in `expanded` list them all (their boxes grow and the layout follows).
The toggle is a link to the page with `?expand=` (live pages ask their socket instead, see
live.js). A child label clipped to its box keeps the whole label in its `<title>` and
`aria-label`, and shows it on hover and keyboard focus.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import urlencode

from wfapp.web.graph.layout import START, layout, node_names

STATUSES = ("pending", "running", "completed", "waiting", "failed")
DEFAULT_ROUTE = "__DEFAULT__"
CHAR_W = 7.4  # average glyph width of the 13px UI font, for sizing boxes without a renderer
CHILD_CHAR_W = 6.6  # the same for the 11.5px child rows
NODE_H = 40
CHILD_H = 20
MAX_CHILDREN = 8
MIN_W, MAX_W = 96, 224
GAP_X, GAP_Y, MARGIN = 36, 64, 24


@dataclass
class Box:
    name: str
    kind: str
    terminal: bool
    x: float = 0
    y: float = 0
    w: float = 0
    h: float = 0

    @property
    def cx(self) -> float:
        return self.x + self.w / 2


def status_class(status: str | None) -> str:
    return f"status-{status if status in STATUSES else 'pending'}"


def route_label(routes: list[Any]) -> str:
    """Show routes as written: strings bare, other values as JSON, the fallback as `default`."""
    shown = []
    for route in routes:
        if route == DEFAULT_ROUTE:
            shown.append("default")
        elif isinstance(route, str):
            shown.append(route)
        else:
            shown.append(json.dumps(route))
    return ", ".join(shown)


def _clip(text: str, width: float, char_w: float = CHAR_W) -> str:
    """Cut `text` to fit `width`; a child's run id after its last `@` is always kept, so two
    children of one name never clip to the same text ("ask_revi…@1", "ask_revi…@2")."""
    room = int((width - 16) / char_w)
    if len(text) <= room:
        return text
    name, at, tail = text.rpartition("@")
    if at and name and len(tail) + 3 < room:
        return name[: room - len(tail) - 2] + "…@" + tail
    return text[: max(room - 1, 1)] + "…"


def _shown(kids: list[dict[str, Any]], expanded: bool) -> list[dict[str, Any]]:
    return kids if expanded else kids[:MAX_CHILDREN]


def _boxes(
    describe: dict[str, Any], children: dict[str, list[dict[str, Any]]], expanded: Collection[str] = ()
) -> dict[str, Box]:
    info = {n["name"]: n for n in describe.get("nodes") or []}
    boxes = {}
    for name in node_names(describe):
        node = info.get(name, {})
        kind = str(node.get("kind") or ("start" if name == START else "node"))
        kids = children.get(name, [])
        listed = _shown(kids, name in expanded)
        longest = max((len(_child_label(k)) for k in listed), default=0)
        width = min(max(len(name) * CHAR_W + 28, longest * CHILD_CHAR_W + 40, MIN_W), MAX_W)
        # One row per listed child, plus the toggle's row when there are more than fit.
        shown = len(listed) + (len(kids) > MAX_CHILDREN)
        height = NODE_H + (shown * CHILD_H + 6 if shown else 0)
        boxes[name] = Box(name, kind, bool(node.get("terminal")), w=width, h=height)
    return boxes


def _place(
    describe: dict[str, Any], boxes: dict[str, Box]
) -> tuple[list[list[str]], set[tuple[str, str]], float, float]:
    plan = layout(describe)
    widths = [sum(boxes[n].w for n in row) + GAP_X * (len(row) - 1) for row in plan.layers]
    inner = max(widths, default=0)
    y: float = MARGIN
    for row, width in zip(plan.layers, widths, strict=True):
        x: float = MARGIN + (inner - width) / 2
        for name in row:
            boxes[name].x, boxes[name].y = x, y
            x += boxes[name].w + GAP_X
        y += max(boxes[n].h for n in row) + GAP_Y
    loops = len(plan.back_edges)
    return plan.layers, plan.back_edges, inner + 2 * MARGIN + 48 * min(loops, 3), y - GAP_Y + MARGIN


def _edge_path(s: Box, t: Box, back: bool, lane: int, right: float) -> tuple[str, float, float]:
    """Return the path data and where its label goes."""
    if s.name == t.name:
        x0, y0 = s.x + s.w, s.y + NODE_H / 2 - 8
        d = f"M{x0:.1f},{y0:.1f} c40,-24 40,40 0,16"
        return d, x0 + 34, y0 + 8
    if back:
        x_out = max(s.x + s.w, t.x + t.w, right - 40 * (lane + 1)) + 28 + 20 * lane
        y0, y1 = s.y + NODE_H / 2, t.y + NODE_H / 2
        d = f"M{s.x + s.w:.1f},{y0:.1f} C{x_out:.1f},{y0:.1f} {x_out:.1f},{y1:.1f} {t.x + t.w:.1f},{y1:.1f}"
        return d, x_out - 4, (y0 + y1) / 2
    x0, y0, x1, y1 = s.cx, s.y + s.h, t.cx, t.y
    dy = max((y1 - y0) / 2, 16)
    d = f"M{x0:.1f},{y0:.1f} C{x0:.1f},{y0 + dy:.1f} {x1:.1f},{y1 - dy:.1f} {x1:.1f},{y1:.1f}"
    # The cubic's midpoint: (P0 + 3 P1 + 3 P2 + P3) / 8.
    return d, (x0 + x1) / 2, (y0 + 3 * (y0 + dy) + 3 * (y1 - dy) + y1) / 8


def _edges_svg(
    describe: dict[str, Any], boxes: dict[str, Box], back: set[tuple[str, str]], width: float, marker: str
) -> str:
    merged: dict[tuple[str, str], list[Any]] = {}
    for edge in describe.get("edges") or []:
        merged.setdefault((edge["source"], edge["target"]), []).extend(edge.get("routes") or [])
    parts = []
    lane = 0
    for (source, target), routes in merged.items():
        is_back = (source, target) in back
        d, lx, ly = _edge_path(boxes[source], boxes[target], is_back, lane, width)
        lane += is_back
        cls = "edge back" if is_back else "edge"
        label = route_label(routes)
        title = f"{source} → {target}" + (f" when {label}" if label else "")
        parts.append(
            f'<g class="{cls}" data-source="{escape(source)}" data-target="{escape(target)}">'
            f"<title>{escape(title)}</title>"
            f'<path d="{d}" marker-end="url(#{marker})"/>'
        )
        if label:
            anchor = "start" if is_back else "middle"
            parts.append(
                f'<text class="edge-label" x="{lx:.1f}" y="{ly + 4:.1f}" text-anchor="{anchor}">'
                f"{escape(_clip(label, 200))}</text>"
            )
        parts.append("</g>")
    return "".join(parts)


def _child_label(child: dict[str, Any]) -> str:
    return str(child.get("path", "")).rsplit("/", 1)[-1]


def _child_svg(box: Box, child: dict[str, Any], row: int) -> str:
    path = str(child.get("path", ""))
    label = _child_label(child)
    state = str(child.get("status") or "pending")
    cy = box.y + NODE_H + row * CHILD_H + 12
    x = box.x + 24
    clipped = _clip(label, box.w - 24, CHILD_CHAR_W)
    if clipped == label:
        text = f'<text x="{x:.1f}" y="{cy + 4:.1f}">{escape(label)}</text>'
        reach = ""
    else:
        # Focusable, named in full, and showing the whole label on hover or focus (CSS).
        text = (
            f'<text class="short" x="{x:.1f}" y="{cy + 4:.1f}">{escape(clipped)}</text>'
            f'<text class="full" x="{x:.1f}" y="{cy + 4:.1f}">{escape(label)}</text>'
        )
        reach = f' tabindex="0" role="img" aria-label="{escape(label)}: {escape(state)}"'
    return (
        f'<g class="child {status_class(child.get("status"))}" data-path="{escape(path)}"{reach}>'
        f"<title>{escape(path)}: {escape(state)}</title>"
        f'<circle cx="{box.x + 14:.1f}" cy="{cy:.1f}" r="4"/>{text}</g>'
    )


def toggle_href(name: str, expanded: Collection[str]) -> str:
    """The page's URL with `name` expanded or collapsed, the others as they are."""
    names = set(expanded) ^ {name}
    return "?" + urlencode([("expand", n) for n in sorted(names)]) + "#run-graph"


def _toggle_svg(box: Box, children: list[dict[str, Any]], expanded: Collection[str]) -> str:
    is_open = box.name in expanded
    rows = len(children) if is_open else MAX_CHILDREN
    cy = box.y + NODE_H + rows * CHILD_H + 12
    hidden = len(children) - MAX_CHILDREN
    text = "Show fewer" if is_open else f"+{hidden} more"
    what = (
        f"Show only the first {MAX_CHILDREN} of {len(children)} children of {box.name}"
        if is_open
        else f"Show all {len(children)} children of {box.name}"
    )
    return (
        f'<a class="more" href="{escape(toggle_href(box.name, expanded))}" role="button" '
        f'aria-expanded="{"true" if is_open else "false"}" data-graph-toggle="{escape(box.name)}" '
        f'aria-label="{escape(what)}"><title>{escape(what)}</title>'
        f'<rect class="hit" x="{box.x + 6:.1f}" y="{cy - 9:.1f}" width="{box.w - 12:.1f}" height="{CHILD_H - 2}" rx="3"/>'
        f'<text x="{box.x + 24:.1f}" y="{cy + 4:.1f}">{escape(text)}</text></a>'
    )


def node_svg(
    box: Box,
    status: str | None,
    children: list[dict[str, Any]],
    dom_id: str,
    expanded: Collection[str] = (),
) -> str:
    """One node, wrapped in a nested `<svg id=...>` that an out-of-band swap can replace."""
    cls = f"node kind-{escape(box.kind)} {status_class(status)}" + (" terminal" if box.terminal else "")
    state = status if status in STATUSES else "pending"
    title = f"{box.name} ({box.kind}): {state}"
    radius = NODE_H / 2 if box.kind == "start" else 6
    label_y = box.y + NODE_H / 2 + 4.5
    rows = [_child_svg(box, child, k) for k, child in enumerate(_shown(children, box.name in expanded))]
    if len(children) > MAX_CHILDREN:
        rows.append(_toggle_svg(box, children, expanded))
    return (
        f'<svg id="{escape(dom_id)}" class="node-wrap" overflow="visible">'
        f'<g class="{cls}" data-node="{escape(box.name)}" data-status="{state}">'
        f"<title>{escape(title)}</title>"
        f'<rect x="{box.x:.1f}" y="{box.y:.1f}" width="{box.w:.1f}" height="{box.h:.1f}" rx="{radius}"/>'
        f'<text class="label" x="{box.cx:.1f}" y="{label_y:.1f}" text-anchor="middle">'
        f"{escape(_clip(box.name, box.w))}</text>"
        f"{''.join(rows)}</g></svg>"
    )


def node_dom_id(describe: dict[str, Any], name: str, id_prefix: str) -> str:
    """The stable element id of a node's wrapper, for out-of-band swaps."""
    return f"{id_prefix}-n{node_names(describe).index(name)}"


def render_graph(
    describe: dict[str, Any],
    statuses: dict[str, str] | None = None,
    children: dict[str, list[dict[str, Any]]] | None = None,
    *,
    id_prefix: str = "graph",
    expanded: Collection[str] = (),
) -> str:
    """Return the SVG markup of the graph, every node with its status class.

    The nodes named in `expanded` list all their dynamic children, not only the first ones.
    """
    statuses, children = statuses or {}, children or {}
    boxes = _boxes(describe, children, expanded)
    _, back, width, height = _place(describe, boxes)
    marker = f"{id_prefix}-arrow"
    name = str(describe.get("name") or "workflow")
    nodes = "".join(
        node_svg(
            box,
            statuses.get(box.name),
            children.get(box.name, []),
            node_dom_id(describe, box.name, id_prefix),
            expanded,
        )
        for box in boxes.values()
    )
    return (
        f'<svg class="wf-graph" id="{escape(id_prefix)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width:.0f} {height:.0f}" width="{width:.0f}" height="{height:.0f}" '
        f'role="group" aria-labelledby="{escape(id_prefix)}-title">'
        f'<title id="{escape(id_prefix)}-title">Graph of {escape(name)}</title>'
        f'<defs><marker id="{escape(marker)}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
        f'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z"/></marker></defs>'
        f'<g class="edges">{_edges_svg(describe, boxes, back, width, escape(marker))}</g>'
        f'<g class="nodes">{nodes}</g></svg>'
    )


def render_node(
    describe: dict[str, Any],
    name: str,
    statuses: dict[str, str] | None = None,
    children: dict[str, list[dict[str, Any]]] | None = None,
    *,
    id_prefix: str = "graph",
    expanded: Collection[str] = (),
) -> str:
    """Return one node's wrapper with `hx-swap-oob`, placed exactly as in `render_graph`.

    Pass the same `statuses` and `children` as the whole graph: box sizes depend on every
    node's children. When the children change, re-render the whole graph instead.
    """
    statuses, children = statuses or {}, children or {}
    boxes = _boxes(describe, children, expanded)
    _place(describe, boxes)
    dom_id = node_dom_id(describe, name, id_prefix)
    markup = node_svg(boxes[name], statuses.get(name), children.get(name, []), dom_id, expanded)
    return markup.replace('class="node-wrap"', 'class="node-wrap" hx-swap-oob="true"', 1)
