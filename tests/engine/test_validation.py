"""Issue 2, item 4: seed 002's graph validation rules 1-8, checked at ``Workflow(...)``."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from engine import DEFAULT_ROUTE, START, Edge, Event, FunctionNode, Runner, Workflow
from engine.errors import GraphValidationError


def step(name: str) -> FunctionNode:
    def run(node_input: Any) -> Any:
        return node_input

    return FunctionNode(run, name=name)


def rejects(rule: int, edges: list[Any], *names: str) -> GraphValidationError:
    """Build a workflow from ``edges``; assert it breaks ``rule`` and names ``names``."""
    with pytest.raises(GraphValidationError) as caught:
        Workflow(name="wf", edges=edges)
    error = caught.value
    assert isinstance(error, ValueError)
    assert error.rule == rule, str(error)
    assert f"rule {rule}" in str(error)
    for name in names:
        assert name in error.nodes, (name, error.nodes)
        assert name in str(error)
    return error


# -- rule 1: unique names -------------------------------------------------------------


def test_rule1_two_nodes_with_one_name() -> None:
    first, second = step("process_data"), step("process_data")
    rejects(1, [(START, first, second)], "process_data")


def test_rule1_two_functions_with_one_name() -> None:
    def make() -> Any:
        def process_data(node_input: Any) -> Any:
            return node_input

        return process_data

    rejects(1, [(START, make(), make())], "process_data")


def test_rule1_the_same_object_twice_is_fine() -> None:
    a, b = step("a"), step("b")
    Workflow(name="wf", edges=[(START, a, b, {"again": a})])


def test_rule1_is_per_graph_a_nested_workflow_may_reuse_a_name() -> None:
    inner = Workflow(name="inner", edges=[(START, step("x"))])
    Workflow(name="outer", edges=[(START, step("x"), inner)])


# -- rule 2: START present, nothing into it -------------------------------------------


def test_rule2_graph_without_start() -> None:
    a, b = step("a"), step("b")
    rejects(2, [(a, b)])


def test_rule2_edge_into_start() -> None:
    a = step("a")
    rejects(2, [(START, a), Edge(from_node=a, to_node=START, route="back")], "a")


def test_rule2_edge_into_start_in_a_tuple() -> None:
    a = step("a")
    rejects(2, [(START, a, {"back": "START"})], "a")


def test_rule2_many_edges_may_leave_start() -> None:
    Workflow(name="wf", edges=[(START, (step("a"), step("b"), step("c")))])


# -- rule 3: START edges are unconditional ----------------------------------------------


def test_rule3_routing_map_right_after_start() -> None:
    error = rejects(3, [(START, {"a": step("node_a")})], "node_a")
    assert "Edges from START must not have routes" in str(error)


def test_rule3_explicit_routed_edge_from_start() -> None:
    rejects(3, [Edge(from_node=START, to_node=step("node_a"), route="go")], "node_a")


# -- rule 4: reachable from START ---------------------------------------------------------


def test_rule4_unreachable_node() -> None:
    a, orphan, b = step("a"), step("orphan"), step("b")
    rejects(4, [(START, a, b), Edge(from_node=orphan, to_node=b)], "orphan")


def test_rule4_unreachable_island() -> None:
    a, x, y = step("a"), step("x"), step("y")
    rejects(4, [(START, a), (x, y)], "x", "y")


# -- rule 5: no duplicate edges -------------------------------------------------------------


def test_rule5_edge_listed_twice() -> None:
    a, b = step("a"), step("b")
    rejects(
        5,
        [Edge(from_node=START, to_node=a), Edge(from_node=a, to_node=b), Edge(from_node=a, to_node=b)],
        "a",
        "b",
    )


def test_rule5_duplicate_through_chain_tuples() -> None:
    a, b = step("a"), step("b")
    rejects(5, [(START, a, b), (a, b)], "a", "b")


def test_rule5_same_pair_with_disjoint_routes_is_one_conditional_connection() -> None:
    a, b = step("a"), step("b")
    explicit = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=a),
            Edge(from_node=a, to_node=b, route="x"),
            Edge(from_node=a, to_node=b, route=["y", 3]),
        ],
    )
    mapped = Workflow(name="wf", edges=[(START, a, {"x": b, "y": b, 3: b})])
    assert explicit.describe()["edges"] == mapped.describe()["edges"]
    assert [e for e in explicit.describe()["edges"] if e["source"] == "a"] == [
        {"source": "a", "target": "b", "routes": ["x", "y", 3]}
    ]


def test_rule5_an_edge_and_a_routing_map_with_disjoint_routes_are_fine() -> None:
    a, b = step("a"), step("b")
    Workflow(name="wf", edges=[(START, a, {"x": b}), Edge(from_node=a, to_node=b, route="y")])


@pytest.mark.parametrize(
    ("first", "second", "says"),
    [
        ("x", "x", "with the route 'x'"),
        (["x", "y"], ["y", "z"], "with the route 'y'"),
        (None, "x", "once without a route"),
        ("x", None, "once without a route"),
        (DEFAULT_ROUTE, DEFAULT_ROUTE, "with the route '__DEFAULT__'"),
    ],
)
def test_rule5_same_pair_with_the_same_overlapping_or_no_route(first: Any, second: Any, says: str) -> None:
    a, b = step("a"), step("b")
    error = rejects(
        5,
        [
            Edge(from_node=START, to_node=a),
            Edge(from_node=a, to_node=b, route=first),
            Edge(from_node=a, to_node=b, route=second),
        ],
        "a",
        "b",
    )
    assert says in str(error)


def test_rule5_routes_match_by_type_so_true_and_1_are_disjoint() -> None:
    a, b = step("a"), step("b")
    Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=a),
            Edge(from_node=a, to_node=b, route=True),
            Edge(from_node=a, to_node=b, route=1),
        ],
    )


def test_rule5_one_edge_with_a_route_list_is_fine() -> None:
    a, b = step("a"), step("b")
    Workflow(
        name="wf", edges=[Edge(from_node=START, to_node=a), Edge(from_node=a, to_node=b, route=["x", "y"])]
    )
    Workflow(name="wf", edges=[(START, a, {"x": b, "y": b})])


# -- rule 6: DEFAULT_ROUTE ---------------------------------------------------------------------


def test_rule6_two_default_edges_from_one_node() -> None:
    # The half of rule 6 google-adk does not enforce.
    a, b, c = step("a"), step("b"), step("c")
    rejects(
        6,
        [
            Edge(from_node=START, to_node=a),
            Edge(from_node=a, to_node=b, route=DEFAULT_ROUTE),
            Edge(from_node=a, to_node=c, route=DEFAULT_ROUTE),
        ],
        "a",
    )


def test_rule6_two_default_edges_through_routing_maps() -> None:
    a, b, c = step("a"), step("b"), step("c")
    rejects(6, [(START, a, {DEFAULT_ROUTE: b}), (a, {"__DEFAULT__": c})], "a")


def test_rule6_default_route_in_a_route_list() -> None:
    a, b = step("a"), step("b")
    rejects(
        6,
        [Edge(from_node=START, to_node=a), Edge(from_node=a, to_node=b, route=["success", DEFAULT_ROUTE])],
        "a",
    )


def test_rule6_a_tuple_under_default_route_is_two_default_edges() -> None:
    # Read literally ("at most one outgoing DEFAULT_ROUTE edge").
    a, b, c = step("a"), step("b"), step("c")
    rejects(6, [(START, a, {"x": step("x"), DEFAULT_ROUTE: (b, c)})], "a")


def test_rule6_one_default_edge_is_fine() -> None:
    a, b, c = step("a"), step("b"), step("c")
    Workflow(name="wf", edges=[(START, a, {"x": b, DEFAULT_ROUTE: c})])


# -- rule 7: no unconditional cycles -----------------------------------------------------------


def test_rule7_unconditional_cycle() -> None:
    a, b = step("a"), step("b")
    rejects(7, [(START, a, b, a)], "a", "b")


def test_rule7_unconditional_self_loop() -> None:
    a = step("a")
    rejects(7, [(START, a), Edge(from_node=a, to_node=a)], "a")


def test_rule7_conditional_loop_is_fine() -> None:
    a, b = step("a"), step("b")
    Workflow(name="wf", edges=[(START, a, b), Edge(from_node=b, to_node=a, route="again")])
    Workflow(name="wf", edges=[(START, a, b, {"again": a})])


# -- rule 8: matching schemas -------------------------------------------------------------------


class Draft(BaseModel):
    text: str


class Review(BaseModel):
    verdict: str


def test_rule8_different_models_are_rejected() -> None:
    def write(node_input: str) -> Draft:
        return Draft(text=node_input)

    def review(node_input: Review) -> str:
        return node_input.verdict

    rejects(8, [(START, write, review)], "write", "review")


def test_rule8_equal_models_are_fine() -> None:
    def write(node_input: str) -> Draft:
        return Draft(text=node_input)

    def read(node_input: Draft) -> str:
        return node_input.text

    Workflow(name="wf", edges=[(START, write, read)])


def test_rule8_only_compares_where_both_sides_are_models() -> None:
    def write(node_input: str) -> Draft:
        return Draft(text=node_input)

    def anything(node_input: dict[str, Any]) -> str:
        return str(node_input)

    def count(node_input: str) -> int:
        return len(node_input)

    def take_review(node_input: Review) -> str:
        return node_input.verdict

    Workflow(name="wf", edges=[(START, write, anything)])
    Workflow(name="wf", edges=[(START, count, take_review)])


def test_rule8_with_models_defined_in_a_function() -> None:
    # Models local to a function, in a module with ``from __future__ import annotations``
    # (the house style): the hints are strings naming local classes.
    class LocalDraft(BaseModel):
        text: str

    class LocalReview(BaseModel):
        verdict: str

    def write(node_input: str) -> LocalDraft:
        return LocalDraft(text=node_input)

    def review(node_input: LocalReview) -> str:
        return node_input.verdict

    rejects(8, [(START, write, review)], "write", "review")


@pytest.mark.parametrize("key", [1.5, None])
def test_routing_map_keys_must_be_routes(key: Any) -> None:
    # Seed 002: each route "is a string, an integer or a boolean"; Edge enforces it, and a
    # routing map key of another type is an edge that can never fire.
    a, b = step("a"), step("b")
    with pytest.raises(ValueError):
        Workflow(name="wf", edges=[(START, a, {key: b})])
    with pytest.raises(ValueError):
        Edge(from_node=a, to_node=b, route=1.5)  # type: ignore[arg-type]


def test_rule8_applies_to_a_nested_workflow_with_an_input_schema() -> None:
    def write(node_input: str) -> Draft:
        return Draft(text=node_input)

    def review(node_input: Review) -> str:
        return node_input.verdict

    inner = Workflow(name="inner", edges=[(START, review)], input_schema=Review)
    rejects(8, [(START, write, inner)], "write", "inner")
    matching = Workflow(name="inner", edges=[(START, step("x"))], input_schema=Draft)
    Workflow(name="wf", edges=[(START, write, matching)])


def test_rule8_applies_to_a_nested_workflows_output() -> None:
    def write(node_input: str) -> Draft:
        return Draft(text=node_input)

    def review(node_input: Review) -> str:
        return node_input.verdict

    def read(node_input: Draft) -> str:
        return node_input.text

    inner = Workflow(name="inner", edges=[(START, write)])
    rejects(8, [(START, inner, review)], "inner", "review")
    Workflow(name="wf", edges=[(START, inner, read)])


async def test_disjoint_routes_between_one_pair_run_the_target_once_per_activation() -> None:
    ran: list[Any] = []

    def router(node_input: Any) -> Event:
        return Event(output=node_input, route=["x", "y"] if node_input == "both" else node_input)

    def target(node_input: Any) -> Any:
        ran.append(node_input)
        return node_input

    a, b = FunctionNode(router, name="a"), FunctionNode(target, name="b")
    workflow = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=a),
            Edge(from_node=a, to_node=b, route="x"),
            Edge(from_node=a, to_node=b, route="y"),
        ],
    )
    for emitted in ("x", "y", "both", "z"):
        await Runner(workflow).run(emitted)
    assert ran == ["x", "y", "both"]
