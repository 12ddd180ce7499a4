"""Issue 25, items 1-5 and 10: terminal outputs, ValueError errors, routes and outputs as ADK hands them."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from engine import (
    DEFAULT_ROUTE,
    START,
    BaseNode,
    Context,
    Event,
    JoinNode,
    RetryConfig,
    Runner,
    Workflow,
    node,
)


def tag(name: str) -> Any:
    def run(node_input: Any) -> str:
        return f"{node_input}>{name}"

    return node(run, name=name)


# -- item 1: one terminal node, however often it runs ------------------------------------


async def test_fan_in_without_a_join_runs_the_terminal_node_twice_and_completes(read_log: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, (tag("a"), tag("b")), tag("c"))]))
    result = await runner.run("in")
    assert result.status == "completed", result.error
    assert result.output == "in>b>c"  # its latest output, as in ADK
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.output_events() if "wf@1" in (e.output_for or [])] == [
        "wf@1/c@1",
        "wf@1/c@2",
    ]


async def test_a_loop_that_ends_at_a_terminal_node_completes(read_log: Any) -> None:
    @node
    def count(ctx: Context, node_input: Any) -> int:
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        return int(ctx.state["n"])

    @node
    def check(ctx: Context, node_input: int) -> Event:
        return Event(output=node_input, route="again" if node_input < 3 else "stop")

    @node
    def report(node_input: int) -> str:
        return f"n={node_input}"

    # report is terminal and runs on every round of the loop
    wf = Workflow(name="wf", edges=[(START, count, check, {"again": count}), (check, report)])
    runner = Runner(wf)
    result = await runner.run(None)
    assert result.status == "completed", result.error
    assert result.output == "n=3"
    assert (await read_log(runner, result.session_id)).started_count("/report@3") == 1


async def test_two_different_terminal_nodes_with_output_raise_a_value_error_a_caller_catches() -> None:
    inner = Workflow(name="inner", edges=[(START, tag("a"), (tag("b"), tag("c")))])
    caught: list[BaseException] = []

    @node(rerun_on_resume=True)
    async def outer(ctx: Context, node_input: Any) -> str:
        try:
            await ctx.run_node(inner, node_input)
        except ValueError as error:
            caught.append(error)
            return "recovered"
        return "no error"

    result = await Runner(Workflow(name="wf", edges=[(START, outer)])).run("in")
    assert result.output == "recovered"
    assert "multiple terminal nodes produced output" in str(caught[0])


# -- item 2: what ADK raises as ValueError is a ValueError ---------------------------------


class Order(BaseModel):
    item: str
    quantity: int = 1


async def test_a_schema_mismatch_is_a_value_error_a_caller_catches() -> None:
    @node
    def bad_output(node_input: Any) -> Order:
        return {"quantity": "many"}  # type: ignore[return-value]

    @node
    def takes_order(node_input: Order) -> str:
        return node_input.item

    caught: list[str] = []

    @node(rerun_on_resume=True)
    async def outer(ctx: Context, node_input: Any) -> list[str]:
        for child, value in ((bad_output, None), (takes_order, {"nope": 1})):
            try:
                await ctx.run_node(child, value)
            except ValueError as error:
                caught.append(type(error).__name__)
        return caught

    result = await Runner(Workflow(name="wf", edges=[(START, outer)])).run(None)
    assert result.status == "completed", result.error
    assert len(result.output) == 2


async def test_refused_run_node_calls_are_value_errors() -> None:
    @node
    def child(node_input: Any) -> str:
        return "c"

    caught: list[str] = []

    @node(rerun_on_resume=True)
    async def outer(ctx: Context, node_input: Any) -> int:
        try:
            await ctx.run_node(child, run_id="42")
        except ValueError:
            caught.append("numeric")
        await ctx.run_node(child, use_as_output=True)
        try:
            await ctx.run_node(child, use_as_output=True)
        except ValueError:
            caught.append("second use_as_output")
        return 0

    result = await Runner(Workflow(name="wf", edges=[(START, outer)])).run(None)
    assert result.status == "completed", result.error
    assert caught == ["numeric", "second use_as_output"]


def test_graph_validation_and_bad_configs_are_value_errors() -> None:
    a = tag("a")
    with pytest.raises(ValueError, match="Graph validation failed"):
        Workflow(name="wf", edges=[(a, tag("b"))])
    with pytest.raises(ValueError):
        RetryConfig(max_attempts="many")  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        Workflow(name="wf", edges=[(START, a)], output_schema=5)


# -- item 3: Event(output=None, route=r) and int/bool routes -------------------------------


@pytest.mark.parametrize("route", ["go", 1, True])
async def test_a_route_with_output_none_routes_and_hands_on_none(route: Any, read_log: Any) -> None:
    class Router(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield Event(output=None, route=route)

    seen: list[Any] = []

    @node
    def chosen(node_input: Any) -> str:
        seen.append(node_input)
        return "chosen"

    @node
    def other(node_input: Any) -> str:
        return "other"

    runner = Runner(
        Workflow(name="wf", edges=[(START, Router(name="r"), {route: chosen, DEFAULT_ROUTE: other})])
    )
    result = await runner.run("in")
    assert (result.status, result.output, seen) == ("completed", "chosen", [None])
    log = await read_log(runner, result.session_id)
    [routed] = [e for e in log.events if e.node_path == "wf@1/r@1" and e.route is not None]
    assert (routed.kind, routed.route, type(routed.route), routed.output_for) == (
        "route",
        route,
        type(route),
        None,
    )


# -- item 5: bytes --------------------------------------------------------------------------


@pytest.mark.parametrize("value", [b"\x00\xffraw", b"ascii", {"blob": b"\xff"}])
async def test_a_bytes_output_fails_saying_bytes_cannot_be_stored(value: Any) -> None:
    @node
    def raw(node_input: Any) -> Any:
        return value

    result = await Runner(Workflow(name="wf", edges=[(START, raw)])).run(None)
    assert result.status == "failed"
    assert "bytes" in (result.error or "") and "nested" not in (result.error or "")


# -- item 10: outputs handed to successors, joins, a workflow's output_schema -------------------


async def test_a_model_output_reaches_successors_as_json_data_unless_their_schema_makes_a_model() -> None:
    @node
    def make(node_input: Any) -> Order:
        return Order(item="pen")

    seen: list[Any] = []

    @node
    def plain(node_input: Any) -> Any:
        seen.append(node_input)
        return node_input

    @node
    def typed(node_input: Order) -> str:
        seen.append(node_input)
        return node_input.item

    result = await Runner(Workflow(name="wf", edges=[(START, make, plain, typed)])).run(None)
    assert result.output == "pen"
    assert seen == [{"item": "pen", "quantity": 1}, Order(item="pen")]
    assert type(seen[0]) is dict


async def test_a_join_input_schema_validates_each_trigger_not_the_joined_dict() -> None:
    @node
    def a(node_input: Any) -> dict[str, Any]:
        return {"item": "pen"}

    @node
    def b(node_input: Any) -> None:
        return None

    join = JoinNode(name="join", input_schema=Order)
    result = await Runner(Workflow(name="wf", edges=[(START, (a, b), join)])).run(None)
    assert result.status == "completed", result.error
    assert result.output == {"a": {"item": "pen", "quantity": 1}, "b": None}

    @node
    def c(node_input: Any) -> dict[str, Any]:
        return {"item": 3}

    bad = await Runner(
        Workflow(name="wf", edges=[(START, (a, c), JoinNode(name="join", input_schema=Order))])
    ).run(None)
    assert bad.status == "failed" and "join" in (bad.error or "")


async def test_a_workflow_output_schema_is_enforced_and_coerces_with_several_terminal_nodes(
    read_log: Any,
) -> None:
    @node
    def route(node_input: str) -> Event:
        return Event(output=node_input, route=node_input)

    @node
    def pen(node_input: Any) -> dict[str, Any]:
        return {"item": "pen"}

    @node
    def broken(node_input: Any) -> dict[str, Any]:
        return {"quantity": "x"}

    wf = Workflow(name="wf", edges=[(START, route, {"pen": pen, "broken": broken})], output_schema=Order)
    runner = Runner(wf)
    good = await runner.run("pen")
    assert good.status == "completed", good.error
    assert good.output == Order(item="pen", quantity=1)  # defaults filled
    assert (await runner.result(good.session_id)).output == {"item": "pen", "quantity": 1}
    bad = await runner.run("broken")
    assert bad.status == "failed" and "wf" in (bad.error or "")
