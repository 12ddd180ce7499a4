"""Issue 25, items 6, 7, 11 and 12: the seeds' names and ADK's fields on nodes, events and retries."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    BaseNode,
    Context,
    Event,
    FunctionNode,
    JoinNode,
    RequestInput,
    RetryConfig,
    Runner,
    Workflow,
    node,
)


class Order(BaseModel):
    item: str
    quantity: int = 1


class Receipt(BaseModel):
    total: int


# -- item 6: input_schema / output_schema ------------------------------------------------


def test_model_annotations_become_schemas_and_other_annotations_do_not() -> None:
    @node
    def bill(node_input: Order) -> Receipt:
        return Receipt(total=node_input.quantity)

    @node
    def count(node_input: int) -> str:
        return str(node_input)

    assert (bill.input_schema, bill.output_schema) == (Order, Receipt)
    assert (count.input_schema, count.output_schema) == (None, None)


async def test_other_annotations_are_still_checked_as_types() -> None:
    @node
    def count(node_input: int) -> str:
        return str(node_input)

    assert (await Runner(Workflow(name="wf", edges=[(START, count)])).run("7")).output == "7"
    refused = await Runner(Workflow(name="wf", edges=[(START, count)])).run("seven")
    assert refused.status == "failed" and "count" in (refused.error or "")


async def test_a_base_node_declares_input_schema_and_output_schema() -> None:
    class Check(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield {"total": node_input.quantity}

    check = Check(name="check", input_schema=Order, output_schema=Receipt)
    wf = Workflow(name="wf", edges=[(START, check)])
    assert (await Runner(wf).run({"item": "pen", "quantity": 3})).output == Receipt(total=3)
    refused = await Runner(wf).run({"quantity": 3})
    assert refused.status == "failed" and "item" in (refused.error or "")


def test_a_json_schema_dict_is_accepted_and_not_enforced() -> None:
    schema = {"type": "object"}
    taken = JoinNode(name="join", input_schema=schema)
    assert taken.input_schema == schema and taken.input_type is None


# -- item 7: wait_for_output ---------------------------------------------------------------


@pytest.mark.parametrize("waits", [False, True])
async def test_a_node_waiting_for_output_triggers_its_successors_only_once_it_has_one(
    waits: bool, read_log: Any
) -> None:
    @node
    def a(node_input: Any) -> str:
        return "A"

    @node
    def b(node_input: Any) -> str:
        return "B"

    def gate(ctx: Context, node_input: Any) -> str | None:
        seen = ctx.state.get("seen", 0) + 1
        ctx.state["seen"] = seen
        return f"both, last {node_input}" if seen == 2 else None

    seen: list[Any] = []

    @node
    def done(node_input: Any) -> str:
        seen.append(node_input)
        return f"done({node_input})"

    runner = Runner(
        Workflow(
            name="wf",
            edges=[(START, (a, b), FunctionNode(gate, wait_for_output=waits), done)],
        )
    )
    result = await runner.run(None)
    assert result.status == "completed", result.error
    # as google-adk 2.13 runs it
    assert seen == (["both, last B"] if waits else [None, "both, last B"])


async def test_join_node_takes_wait_for_output() -> None:
    assert JoinNode(name="join", wait_for_output=True).wait_for_output


# -- item 11: ADK's RequestInput and Event fields ---------------------------------------------


async def test_request_input_takes_adks_prompt_and_camel_case_names() -> None:
    @node
    def ask(node_input: Any) -> RequestInput:
        return RequestInput(prompt="Approve?", interruptId="ok", responseSchema=bool)

    result = await Runner(Workflow(name="wf", edges=[(START, ask)])).run(None)
    [asked] = result.interrupts
    assert (asked.id, asked.message, asked.response_schema) == ("ok", "Approve?", {"type": "boolean"})


async def test_an_event_takes_a_branch_and_keeps_it(read_log: Any) -> None:
    class Lane(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield Event(output="x", branch="lane@1")

    runner = Runner(Workflow(name="wf", edges=[(START, Lane(name="lane"))]))
    result = await runner.run(None)
    assert result.output == "x"
    [written] = (await read_log(runner, result.session_id)).output_events()
    assert written.branch == "lane@1"


# -- item 12: RetryConfig.exceptions -------------------------------------------------------------


def test_retry_exceptions_take_classes_or_names_and_keep_names() -> None:
    config = RetryConfig(exceptions=[KeyError, "TimeoutError"])
    assert config.exceptions == ["KeyError", "TimeoutError"]
    assert config.retries(KeyError("k"), 1) and config.retries(TimeoutError(), 1)
    assert not config.retries(ValueError(), 1)


@pytest.mark.parametrize("bad", [[1], [object], [KeyError()], "KeyError"])
def test_retry_exceptions_refuse_anything_else_with_a_value_error(bad: Any) -> None:
    with pytest.raises(ValueError):
        RetryConfig(exceptions=bad)


async def test_a_workflow_input_schema_validates_its_input_and_hands_on_json_data() -> None:
    seen: list[Any] = []

    @node
    def first(node_input: Any) -> str:
        seen.append(node_input)
        return "ok"

    wf = Workflow(name="wf", edges=[(START, first)], input_schema=Order)
    assert (wf.input_schema, wf.input_json_schema) == (Order, Order.model_json_schema())
    assert (await Runner(wf).run({"item": "pen"})).output == "ok"
    assert seen == [{"item": "pen", "quantity": 1}]
    refused = await Runner(wf).run({"quantity": 2})
    assert refused.status == "failed" and "item" in (refused.error or "")
