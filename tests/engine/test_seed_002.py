"""Issue 2, item 10: the Python examples of seed 002 (the graph page), run as tests.

Each test writes the seed's example with ``engine`` imports in place of ``google.adk``;
where the seed shows a fragment (``...`` bodies), the bodies are filled in with the
smallest code that does what the surrounding text says.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from pydantic import BaseModel

from engine import DEFAULT_ROUTE, START, Edge, Event, FunctionNode, JoinNode, Runner, Workflow, node
from engine.errors import GraphValidationError


async def test_fan_out_workflow(read_log: Any) -> None:
    runs: Counter[str] = Counter()

    def word_count(node_input: str) -> int:
        runs["word_count"] += 1
        return len(node_input.split())

    def shout(node_input: str) -> str:
        runs["shout"] += 1
        return node_input.upper()

    join = JoinNode(name="join")

    def report(node_input: dict[str, Any]) -> str:
        runs["report"] += 1
        return f"{node_input['shout']} ({node_input['word_count']} words)"

    workflow = Workflow(
        name="fan_out_workflow",
        edges=[
            (START, (word_count, shout), join, report),
        ],
    )

    # "The single chain tuple expands into five edges."
    assert {(e["source"], e["target"]) for e in workflow.describe()["edges"]} == {
        ("START", "word_count"),
        ("START", "shout"),
        ("word_count", "join"),
        ("shout", "join"),
        ("join", "report"),
    }

    runner = Runner(workflow)
    result = await runner.run("the quick brown fox")
    assert result.status == "completed"
    assert result.output == "THE QUICK BROWN FOX (4 words)"
    assert runs == {"word_count": 1, "shout": 1, "report": 1}
    log = await read_log(runner, result.session_id)
    assert sorted(log.started()) == sorted(
        [
            "fan_out_workflow@1",
            "fan_out_workflow@1/word_count@1",
            "fan_out_workflow@1/shout@1",
            "fan_out_workflow@1/join@1",
            "fan_out_workflow@1/report@1",
        ]
    )
    outputs = log.outputs()
    # Both workers receive the same input, the user's message.
    assert outputs["fan_out_workflow@1/word_count@1"] == 4
    assert outputs["fan_out_workflow@1/shout@1"] == "THE QUICK BROWN FOX"
    assert outputs["fan_out_workflow@1/join@1"] == {"word_count": 4, "shout": "THE QUICK BROWN FOX"}
    [final] = [e for e in log.output_events() if "fan_out_workflow@1" in (e.output_for or [])]
    assert final.node_path == "fan_out_workflow@1/report@1"


def _steps(runs: Counter[str], *names: str) -> list[FunctionNode]:
    def make(name: str) -> FunctionNode:
        def run(node_input: Any) -> str:
            runs[name] += 1
            return f"{node_input}>{name}"

        return FunctionNode(run, name=name)

    return [make(name) for name in names]


async def test_sequential_chain(read_log: Any) -> None:
    runs: Counter[str] = Counter()
    step_a, step_b, step_c = _steps(runs, "step_a", "step_b", "step_c")
    runner = Runner(Workflow(name="wf", edges=[(START, step_a, step_b, step_c)]))
    result = await runner.run("go")
    assert result.output == "go>step_a>step_b>step_c"
    assert runs == {"step_a": 1, "step_b": 1, "step_c": 1}
    log = await read_log(runner, result.session_id)
    assert log.started() == ["wf@1", "wf@1/step_a@1", "wf@1/step_b@1", "wf@1/step_c@1"]


async def test_parallel_fan_out_with_two_terminal_outputs_fails(read_log: Any) -> None:
    runs: Counter[str] = Counter()
    step_a, step_b, step_c = _steps(runs, "step_a", "step_b", "step_c")
    runner = Runner(Workflow(name="wf", edges=[(START, step_a, (step_b, step_c))]))
    result = await runner.run("go")
    # step_a runs, then step_b and step_c both run on step_a's output...
    assert runs == {"step_a": 1, "step_b": 1, "step_c": 1}
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/step_b@1"] == "go>step_a>step_b"
    assert log.outputs()["wf@1/step_c@1"] == "go>step_a>step_c"
    # ...and two terminal outputs fail the run.
    assert result.status == "failed"
    assert "multiple terminal nodes produced output" in result.error


def _routing_steps(runs: Counter[str], route: str) -> tuple[Any, ...]:
    def step_a(node_input: str):  # type: ignore[no-untyped-def]
        runs["step_a"] += 1
        yield Event(route=route)

    return (FunctionNode(step_a), *_steps(runs, "step_b", "step_c", "fallback_step"))


@pytest.mark.parametrize(
    ("route", "taken"),
    [("success", "step_b"), ("failure", "step_c"), ("something_else", "fallback_step")],
)
async def test_conditional_routing_with_default_route(route: str, taken: str, read_log: Any) -> None:
    runs: Counter[str] = Counter()
    step_a, step_b, step_c, fallback_step = _routing_steps(runs, route)
    edges = [
        (
            START,
            step_a,
            {
                "success": step_b,
                "failure": step_c,
                DEFAULT_ROUTE: fallback_step,
            },
        ),
    ]
    runner = Runner(Workflow(name="wf", edges=edges))
    result = await runner.run("go")
    assert result.status == "completed"
    # A route-only event gives no output, so the chosen step receives None.
    assert result.output == f"None>{taken}"
    assert runs == {"step_a": 1, taken: 1}
    log = await read_log(runner, result.session_id)
    assert log.started() == ["wf@1", "wf@1/step_a@1", f"wf@1/{taken}@1"]
    assert log.routes() == {"wf@1/step_a@1": route}


async def test_routing_map_value_tuple_fans_out() -> None:
    runs: Counter[str] = Counter()
    step_a, step_b, step_c, fallback_step = _routing_steps(runs, "success")
    edges = [
        (START, step_a, {"success": (step_b, step_c), "failure": fallback_step}),
    ]
    result = await Runner(Workflow(name="wf", edges=edges)).run("go")
    assert runs == {"step_a": 1, "step_b": 1, "step_c": 1}
    # "the same terminal-output rule applies to step_b and step_c"
    assert result.status == "failed"
    assert "multiple terminal nodes produced output" in result.error


async def test_routing_map_value_tuple_failure_route() -> None:
    runs: Counter[str] = Counter()
    step_a, step_b, step_c, fallback_step = _routing_steps(runs, "failure")
    edges = [
        (START, step_a, {"success": (step_b, step_c), "failure": fallback_step}),
    ]
    result = await Runner(Workflow(name="wf", edges=edges)).run("go")
    assert result.status == "completed"
    assert result.output == "None>fallback_step"
    assert runs == {"step_a": 1, "fallback_step": 1}


async def test_explicit_edge_objects(read_log: Any) -> None:
    runs: Counter[str] = Counter()

    @node()
    def step_a(node_input: str):  # type: ignore[no-untyped-def]
        runs["step_a"] += 1
        yield Event(output=node_input, route="success" if node_input == "good" else "failure")

    @node()
    def step_b(node_input: str):  # type: ignore[no-untyped-def]
        runs["step_b"] += 1
        yield f"b got {node_input}"

    @node()
    def step_c(node_input: str):  # type: ignore[no-untyped-def]
        runs["step_c"] += 1
        yield f"c got {node_input}"

    edges = [
        Edge(from_node=START, to_node=step_a),
        Edge(from_node=step_a, to_node=step_b, route="success"),
        Edge(from_node=step_a, to_node=step_c, route="failure"),
    ]
    runner = Runner(Workflow(name="wf", edges=edges))
    good = await runner.run("good")
    bad = await runner.run("bad")
    assert good.output == "b got good"
    assert bad.output == "c got bad"
    assert runs == {"step_a": 2, "step_b": 1, "step_c": 1}
    assert (await read_log(runner, bad.session_id)).started() == ["wf@1", "wf@1/step_a@1", "wf@1/step_c@1"]


def test_edge_is_strict_about_nodes() -> None:
    def step_a(node_input: str) -> str:
        return node_input

    with pytest.raises(ValueError, match="Input should be a valid dictionary or instance of BaseNode"):
        Edge(from_node=START, to_node=step_a)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Input should be a valid dictionary or instance of BaseNode"):
        Edge(from_node="START", to_node=FunctionNode(func=step_a))  # type: ignore[arg-type]
    # Wrapped, and with the START object, it is fine.
    Edge(from_node=START, to_node=FunctionNode(func=step_a))
    Edge(from_node=START, to_node=node()(step_a))


async def test_start_string_alias_in_a_chain_tuple() -> None:
    runs: Counter[str] = Counter()
    (step_a,) = _steps(runs, "step_a")
    result = await Runner(Workflow(name="wf", edges=[("START", step_a)])).run("go")
    assert result.output == "go>step_a"
    assert runs == {"step_a": 1}


# -- the nine rules (1-8; rule 9 comes with agent nodes) --------------------------------------


def _fails(rule: int, edges: list[Any], message: str | None = None) -> None:
    with pytest.raises(ValueError) as caught:
        Workflow(name="wf", edges=edges)
    assert isinstance(caught.value, GraphValidationError)
    assert caught.value.rule == rule
    if message is not None:
        assert message in str(caught.value)


def test_two_function_nodes_called_process_data() -> None:
    def first() -> Any:
        def process_data(node_input: Any) -> Any:
            return node_input

        return process_data

    _fails(1, [(START, first(), first())])


def test_router_right_after_start() -> None:
    node_a = FunctionNode(lambda node_input: node_input, name="node_a")
    _fails(3, [(START, {"a": node_a})], "Edges from START must not have routes")


def test_same_edge_listed_twice() -> None:
    a = FunctionNode(lambda node_input: node_input, name="A")
    b = FunctionNode(lambda node_input: node_input, name="B")
    _fails(5, [(START, a), Edge(from_node=a, to_node=b), Edge(from_node=a, to_node=b)])


def test_default_route_in_a_route_list() -> None:
    a = FunctionNode(lambda node_input: node_input, name="A")
    b = FunctionNode(lambda node_input: node_input, name="B")
    _fails(6, [(START, a), Edge(from_node=a, to_node=b, route=["success", DEFAULT_ROUTE])])


async def test_unconditional_cycle_rejected_conditional_loop_allowed() -> None:
    a = FunctionNode(lambda node_input: node_input, name="A")
    b = FunctionNode(lambda node_input: node_input, name="B")
    _fails(7, [(START, a, b, a)])
    Workflow(name="wf", edges=[(START, a, b), Edge(from_node=b, to_node=a, route="again")])


class Article(BaseModel):
    body: str


class Summary(BaseModel):
    text: str


def test_inferred_schemas_must_match() -> None:
    def write(node_input: str) -> Article:
        return Article(body=node_input)

    def summarize(node_input: Summary) -> str:
        return node_input.text

    _fails(8, [(START, write, summarize)])
