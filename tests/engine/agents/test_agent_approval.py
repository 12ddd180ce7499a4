"""Human approval of tool calls: approve, reject with a reason, edit the arguments."""

from __future__ import annotations

from typing import Any

import pytest

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow, tool
from engine.errors import InvalidAnswerError

from .scripts import Script, call, part_texts, text

REFUNDS: list[tuple[str, float]] = []


@tool(requires_approval=True)
def refund(order_id: str, amount: float) -> str:
    """Refund part of an order."""
    REFUNDS.append((order_id, amount))
    return f"refunded {amount} on {order_id}"


def lookup(order_id: str) -> dict[str, Any]:
    """Look an order up."""
    return {"order_id": order_id, "total": 40.0}


@pytest.fixture(autouse=True)
def no_refunds() -> None:
    REFUNDS.clear()


def support(script: Script) -> Workflow:
    agent = LlmAgent(
        name="support",
        model=script.model,
        instruction="Help the customer.",
        tools=[lookup, refund],
    )
    return Workflow(name="wf", edges=[(START, agent)])


def refund_script() -> Script:
    return Script(
        call("lookup", {"order_id": "A7"}),
        call("refund", {"order_id": "A7", "amount": 25.0}),
        lambda messages, info: text("done: " + " | ".join(part_texts(list(messages[-1].parts)))),
    )


async def asked(store: InMemoryEventStore, script: Script) -> tuple[Runner, Any]:
    runner = Runner(support(script), store=store)
    waiting = await runner.run("refund my order A7")
    assert waiting.status == "waiting", waiting.error
    return runner, waiting


async def test_an_approval_question_carries_the_tool_and_its_arguments(store: InMemoryEventStore) -> None:
    script = refund_script()
    _, waiting = await asked(store, script)

    [question] = waiting.interrupts
    assert question.node_path == "wf@1/support@1/approval@1"
    call_id = question.payload.pop("tool_call_id")  # the question is bound to this one call
    assert call_id and isinstance(call_id, str)
    assert question.payload == {
        "kind": "tool_approval",
        "agent": "support",
        "tool": "refund",
        "arguments": {"order_id": "A7", "amount": 25.0},
    }
    arguments = question.response_schema["properties"]["arguments"]
    assert arguments["default"] == {"order_id": "A7", "amount": 25.0}
    assert arguments["properties"] == {"order_id": {"type": "string"}, "amount": {"type": "number"}}
    assert REFUNDS == [] and script.calls == 2


async def test_approve_runs_the_tool_and_the_conversation_goes_on(
    store: InMemoryEventStore, read_log: Any
) -> None:
    script = refund_script()
    runner, waiting = await asked(store, script)

    done = await runner.resume(
        waiting.session_id, {waiting.interrupts[0].id: {"approved": True}}, actor="ann"
    )

    assert done.status == "completed", done.error
    assert done.output == "done: refunded 25.0 on A7"
    assert REFUNDS == [("A7", 25.0)]
    assert script.calls == 3  # the two recorded model steps were replayed, not requested again
    log = await read_log(runner, waiting.session_id)
    [answer] = log.of_kind("answer")
    assert answer.answer.actor == "ann"
    assert log.outputs()["wf@1/support@1/refund@2.1"]["result"] == "refunded 25.0 on A7"
    assert log.ran().count("wf@1/support@1/lookup@1.1") == 1  # a completed tool call never runs again


async def test_reject_tells_the_model_the_reason(store: InMemoryEventStore) -> None:
    script = refund_script()
    runner, waiting = await asked(store, script)

    answer = {"approved": False, "reason": "refunds over 20 need a manager"}
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: answer})

    assert done.status == "completed", done.error
    assert REFUNDS == []
    [told] = part_texts(script.last_parts(3))
    assert "rejected" in told and "refunds over 20 need a manager" in told


async def test_edited_arguments_are_what_the_tool_gets(store: InMemoryEventStore) -> None:
    script = refund_script()
    runner, waiting = await asked(store, script)

    edited = {"approved": True, "arguments": {"order_id": "A7", "amount": 15.0}}
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: edited})

    assert done.output == "done: refunded 15.0 on A7"
    assert REFUNDS == [("A7", 15.0)]


async def test_edited_arguments_that_break_the_tool_schema_are_refused(store: InMemoryEventStore) -> None:
    script = refund_script()
    runner, waiting = await asked(store, script)
    question = waiting.interrupts[0].id
    before = await store.list_events(waiting.session_id)

    with pytest.raises(InvalidAnswerError) as refused:
        await runner.resume(
            waiting.session_id,
            {question: {"approved": True, "arguments": {"order_id": "A7", "amount": "lots"}}},
        )

    assert "arguments.amount" in refused.value.field_errors
    assert await store.list_events(waiting.session_id) == before  # nothing written
    assert REFUNDS == []


async def test_several_calls_needing_approval_are_asked_at_once(store: InMemoryEventStore) -> None:
    from pydantic_ai import ModelResponse, ToolCallPart

    script = Script(
        ModelResponse(
            parts=[
                ToolCallPart("refund", {"order_id": "A1", "amount": 1.0}),
                ToolCallPart("refund", {"order_id": "A2", "amount": 2.0}),
            ]
        ),
        text("both handled"),
    )
    runner = Runner(support(script), store=store)
    waiting = await runner.run("two refunds")

    assert [i.payload["arguments"]["order_id"] for i in waiting.interrupts] == ["A1", "A2"]
    first, second = (i.id for i in waiting.interrupts)
    still = await runner.resume(waiting.session_id, {first: {"approved": True}})
    assert still.status == "waiting" and [i.id for i in still.interrupts] == [second]
    done = await runner.resume(waiting.session_id, {second: {"approved": False}})
    assert done.output == "both handled"
    assert REFUNDS == [("A1", 1.0)]
    assert script.calls == 2


async def test_a_tool_needing_approval_works_as_a_graph_node(store: InMemoryEventStore) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, refund)]), store=store)
    waiting = await runner.run({"order_id": "B2", "amount": 9.5})
    [question] = waiting.interrupts
    assert question.payload["tool"] == "refund" and question.payload["agent"] is None

    done = await runner.resume(waiting.session_id, {question.id: {"approved": True}})
    assert done.output == "refunded 9.5 on B2"
    assert REFUNDS == [("B2", 9.5)]
