"""The server-rendered workflow graph: every node and route label, escaping, status classes."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from wfapp.web.graph.layout import crossings, layout
from wfapp.web.graph.svg import render_graph, render_node

SVG = "{http://www.w3.org/2000/svg}"


def edge(source: str, target: str, *routes: object) -> dict:
    return {"source": source, "target": target, "routes": list(routes)}


EXPENSE = {
    "name": "expense_approval",
    "description": "Approve expenses",
    "input_schema": None,
    "nodes": [
        {"name": "START", "kind": "start", "terminal": False},
        {"name": "classify", "kind": "function", "terminal": False},
        {"name": "auto_approve", "kind": "function", "terminal": True},
        {"name": "manager", "kind": "function", "terminal": False},
        {"name": "finance", "kind": "function", "terminal": False},
        {"name": "combine", "kind": "join", "terminal": False},
        {"name": "decide", "kind": "function", "terminal": True},
    ],
    "edges": [
        edge("START", "classify"),
        edge("classify", "auto_approve", "small"),
        edge("classify", "manager", "medium", "large"),
        edge("classify", "finance", "large"),
        edge("manager", "combine"),
        edge("finance", "combine"),
        edge("manager", "decide", "__DEFAULT__"),
        edge("combine", "decide"),
    ],
}

LOOP = {
    "name": "review",
    "nodes": [
        {"name": "START", "kind": "start", "terminal": False},
        {"name": "draft", "kind": "function", "terminal": False},
        {"name": "review", "kind": "function", "terminal": False},
        {"name": "publish", "kind": "function", "terminal": True},
    ],
    "edges": [
        edge("START", "draft"),
        edge("draft", "review"),
        edge("review", "draft", "rejected"),
        edge("review", "publish", "approved"),
        edge("review", "review", "retry"),
    ],
}


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def nodes(root: ET.Element) -> dict[str, ET.Element]:
    return {g.get("data-node"): g for g in root.iter(f"{SVG}g") if g.get("data-node")}


def texts(root: ET.Element) -> list[str]:
    return ["".join(t.itertext()) for t in root.iter(f"{SVG}text")]


def test_every_node_and_route_label_appears() -> None:
    root = parse(render_graph(EXPENSE))
    assert set(nodes(root)) == {n["name"] for n in EXPENSE["nodes"]}
    labels = texts(root)
    for label in ("small", "medium, large", "large", "default"):
        assert label in labels
    assert "__DEFAULT__" not in render_graph(EXPENSE)
    assert len(root.findall(f".//{SVG}path[@marker-end]")) == len(EXPENSE["edges"])


def test_every_node_has_an_accessible_title_and_a_status_class() -> None:
    root = parse(render_graph(EXPENSE, {"classify": "completed", "manager": "waiting", "finance": "running"}))
    found = nodes(root)
    assert found["classify"].get("class") == "node kind-function status-completed"
    assert "status-waiting" in found["manager"].get("class")
    assert "status-running" in found["finance"].get("class")
    assert "status-pending" in found["combine"].get("class")
    assert "terminal" in found["decide"].get("class")
    assert found["manager"].find(f"{SVG}title").text == "manager (function): waiting"
    assert root.find(f"{SVG}title").text == "Graph of expense_approval"


def test_unknown_status_shows_as_pending() -> None:
    found = nodes(parse(render_graph(EXPENSE, {"classify": "<b>"})))
    assert "status-pending" in found["classify"].get("class")


def test_layers_follow_longest_paths_from_start() -> None:
    plan = layout(EXPENSE)
    assert plan.layers[0] == ["START"]
    assert plan.layer_of["combine"] == 3
    assert plan.layer_of["decide"] == 4  # below combine, not beside manager


def test_loops_are_back_edges_drawn_as_curves() -> None:
    plan = layout(LOOP)
    assert plan.back_edges == {("review", "draft"), ("review", "review")}
    assert [plan.layer_of[n] for n in ("START", "draft", "review", "publish")] == [0, 1, 2, 3]
    root = parse(render_graph(LOOP))
    back = [g for g in root.iter(f"{SVG}g") if g.get("class") == "edge back"]
    assert {(g.get("data-source"), g.get("data-target")) for g in back} == plan.back_edges
    assert {"rejected", "approved", "retry"} <= set(texts(root))


def test_barycenter_removes_avoidable_crossings() -> None:
    crossed = {
        "name": "x",
        "nodes": [{"name": n, "kind": "function", "terminal": False} for n in ("START", "a", "b", "c", "d")],
        "edges": [edge("START", "a"), edge("START", "b"), edge("a", "d"), edge("b", "c")],
    }
    plan = layout(crossed)
    pairs = [(e["source"], e["target"]) for e in crossed["edges"]]
    assert crossings(plan.layers, pairs) == 0


def test_text_is_escaped() -> None:
    evil = {
        "name": "<script>alert(1)</script>",
        "nodes": [
            {"name": "START", "kind": "start", "terminal": False},
            {"name": 'a"><script>x</script>', "kind": "function", "terminal": True},
        ],
        "edges": [edge("START", 'a"><script>x</script>', "<img src=x onerror=alert(1)>")],
    }
    svg = render_graph(evil)
    assert "<script" not in svg and "<img" not in svg
    root = parse(svg)
    assert 'a"><script>x</script>' in nodes(root)
    titles = ["".join(t.itertext()) for t in root.iter(f"{SVG}title")]
    assert 'START → a"><script>x</script> when <img src=x onerror=alert(1)>' in titles
    assert any(t.startswith("<img src=x") for t in texts(root))


def test_dynamic_children_show_under_their_parent() -> None:
    kids = {
        "manager": [{"path": f"expense@1/manager@1/check@{i}", "status": "completed"} for i in range(1, 11)]
    }
    kids["manager"][0]["status"] = "failed"
    root = parse(render_graph(EXPENSE, children=kids))
    manager = nodes(root)["manager"]
    rows = [g for g in manager.iter(f"{SVG}g") if g.get("data-path")]
    assert len(rows) == 8
    assert rows[0].get("class") == "child status-failed"
    assert "check@1" in texts(manager)
    assert "+2 more" in texts(manager)


def test_a_single_node_swaps_out_of_band_in_place() -> None:
    statuses = {"manager": "waiting"}
    full = render_graph(EXPENSE, statuses, id_prefix="run-graph")
    node = render_node(EXPENSE, "manager", {"manager": "completed"}, id_prefix="run-graph")
    wrapper = parse(node.replace("<svg ", f'<svg xmlns="{SVG[1:-1]}" ', 1))
    assert wrapper.get("hx-swap-oob") == "true"
    same_id = re.search(rf'<svg id="{wrapper.get("id")}" class="node-wrap"[^>]*>(.*?)</svg>', full)
    assert same_id is not None
    old = parse(f'<svg xmlns="http://www.w3.org/2000/svg">{same_id.group(1)}</svg>')
    new_g, old_g = nodes(wrapper)["manager"], nodes(old)["manager"]
    assert "status-completed" in new_g.get("class") and "status-waiting" in old_g.get("class")
    assert new_g.find(f"{SVG}rect").attrib == old_g.find(f"{SVG}rect").attrib


def test_children_fit_their_box_and_a_waiting_child_makes_its_parent_waiting() -> None:
    from wfapp.web.run_state import node_statuses

    rows = [
        ("started", "batch@1/review_item@1"),
        ("started", "batch@1/review_item@1/review_item@1"),
        ("interrupt", "batch@1/review_item@1/review_item@1"),
        ("started", "batch@1/review_item@1/review_item@2"),
        ("completed", "batch@1/review_item@1/review_item@2"),
        ("started", "batch@1/review_item@1/review_item@2/deep@1"),
    ]
    statuses, children = node_statuses(rows)
    assert statuses == {"review_item": "waiting"}
    assert children == {
        "review_item": [
            {"path": "batch@1/review_item@1/review_item@1", "status": "waiting"},
            {"path": "batch@1/review_item@1/review_item@2", "status": "completed"},
        ]
    }
    graph = {"name": "batch", "nodes": [{"name": "START", "kind": "start", "terminal": False},
             {"name": "review_item", "kind": "parallel_worker", "terminal": True}],
             "edges": [edge("START", "review_item")]}  # fmt: skip
    root = parse(render_graph(graph, statuses, children))
    assert {"review_item@1", "review_item@2"} <= set(texts(root))


def _fanout(count: int, name: str = "check") -> dict[str, list[dict[str, str]]]:
    return {
        "manager": [
            {"path": f"expense@1/manager@1/{name}@{i}", "status": "completed"} for i in range(1, count + 1)
        ]
    }


def test_a_wide_fanout_expands_to_every_child_and_collapses_again() -> None:
    kids = _fanout(20)
    folded = nodes(parse(render_graph(EXPENSE, children=kids)))["manager"]
    toggle = folded.find(f"{SVG}a")
    assert toggle is not None
    assert (toggle.get("aria-expanded"), toggle.get("role")) == ("false", "button")
    assert toggle.get("href") == "?expand=manager#run-graph"
    assert toggle.get("aria-label") == "Show all 20 children of manager"
    assert "+12 more" in texts(toggle)

    opened = nodes(parse(render_graph(EXPENSE, children=kids, expanded={"manager"})))["manager"]
    rows = [g for g in opened.iter(f"{SVG}g") if g.get("data-path")]
    assert len(rows) == 20
    toggle = opened.find(f"{SVG}a")
    assert toggle is not None and toggle.get("aria-expanded") == "true"
    assert "Show fewer" in texts(toggle) and toggle.get("href") == "?#run-graph"
    # The box grows with its rows, and what lies below moves down with it.
    height = float(opened.find(f"{SVG}rect").get("height"))
    assert height > float(folded.find(f"{SVG}rect").get("height")) + 11 * 20
    decide_y = [
        float(
            nodes(parse(render_graph(EXPENSE, children=kids, expanded=e)))["decide"]
            .find(f"{SVG}rect")
            .get("y")
        )
        for e in ((), {"manager"})
    ]
    assert decide_y[1] > decide_y[0]


def test_a_clipped_child_label_is_whole_on_hover_focus_and_for_screen_readers() -> None:
    long_name = "reconcile_supplier_invoice_lines_for_q3"
    kids = _fanout(2, long_name)
    kids["manager"].append({"path": "expense@1/manager@1/ok@1", "status": "waiting"})
    manager = nodes(parse(render_graph(EXPENSE, children=kids)))["manager"]
    rows = {g.get("data-path").rsplit("/", 1)[-1]: g for g in manager.iter(f"{SVG}g") if g.get("data-path")}
    clipped = rows[f"{long_name}@1"]
    assert clipped.get("tabindex") == "0"
    assert clipped.get("aria-label") == f"{long_name}@1: completed"
    assert clipped.find(f"{SVG}title").text == f"expense@1/manager@1/{long_name}@1: completed"
    short, full = (clipped.find(f"{SVG}text[@class='{c}']") for c in ("short", "full"))
    assert (
        short is not None
        and short.text.endswith("…@1")
        and full is not None
        and full.text == f"{long_name}@1"
    )
    # A label that fits is plain text, and not a tab stop of its own.
    assert rows["ok@1"].get("tabindex") is None and texts(rows["ok@1"]) == ["ok@1"]
