"""A person's approval applies to exactly the tool call they were shown, once (issue 24.2).

After a ``RetryConfig`` retry the model may propose the same tool with other arguments; that
call is asked about again, never run on the earlier approval.
"""

from __future__ import annotations

import pytest

from engine import START, InMemoryEventStore, LlmAgent, RetryConfig, Runner, Workflow, tool

from .scripts import Script, call, text

PAID: list[float] = []
FAIL_FIRST: list[bool] = []


@tool(requires_approval=True)
def issue_refund(amount: float) -> str:
    """Refund the customer."""
    if FAIL_FIRST:
        FAIL_FIRST.pop()
        raise ConnectionError("the payment gateway timed out")
    PAID.append(amount)
    return f"refunded {amount}"


@pytest.fixture(autouse=True)
def clean() -> None:
    PAID.clear()
    FAIL_FIRST.clear()


def flow(script: Script) -> Workflow:
    agent = LlmAgent(
        name="support",
        model=script.model,
        instruction="Refund what is due.",
        tools=[issue_refund],
        retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0),
    )
    return Workflow(name="wf", edges=[(START, agent)])


async def test_an_approval_is_not_reused_for_another_call_after_a_retry() -> None:
    script = Script(
        call("issue_refund", {"amount": 39}),  # attempt 1: the call a person approves
        call("issue_refund", {"amount": 9999}),  # attempt 2, after the approved call failed
        text("refunded"),
    )
    store = InMemoryEventStore()
    runner = Runner(flow(script), store=store)
    waiting = await runner.run("refund order 7")
    [first] = waiting.interrupts
    assert first.payload["arguments"] == {"amount": 39}

    FAIL_FIRST.append(True)  # the approved call fails: the agent's retry asks the model again
    again = await runner.resume(waiting.session_id, {first.id: {"approved": True}})

    assert PAID == []  # 9999 was never paid on the approval of 39
    assert again.status == "waiting", again.error
    [second] = again.interrupts
    assert second.id != first.id
    assert second.payload["arguments"] == {"amount": 9999}
    assert second.payload["tool_call_id"] != first.payload["tool_call_id"]
    assert second.node_path == "wf@1/support@1/approval@1.1r2"  # the attempt's own question

    rejected = await runner.resume(waiting.session_id, {second.id: {"approved": False, "reason": "too much"}})
    assert rejected.status == "completed", rejected.error
    assert PAID == []
    assert script.calls == 3  # nothing recorded was asked of the model again


async def test_the_same_call_approved_once_runs_once_and_replays_without_the_model() -> None:
    script = Script(call("issue_refund", {"amount": 39}), text("refunded 39"))
    store = InMemoryEventStore()
    runner = Runner(flow(script), store=store)
    waiting = await runner.run("refund order 7")
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})
    assert done.status == "completed", done.error
    assert PAID == [39]

    assert script.calls == 2  # the resume replayed the first step instead of asking the model again
