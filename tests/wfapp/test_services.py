"""Services with real commits: start, answer, refuse, cancel and retry, and the runtime behind them."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from engine.errors import InterruptAlreadyAnswered, InvalidAnswerError, UnknownInterruptError
from tests.wfapp import flows
from tests.wfapp.helpers import settled
from wfapp.errors import (
    InputValidationError,
    NotPermitted,
    RunStateError,
    UnknownRunError,
    UnknownWorkflowError,
)
from wfapp.models import AnswerAttempt, Event, Interrupt, Session
from wfapp.runs import answering, interventions, starting
from wfapp.runs.runtime import Runtime

EXPENSE = {"employee": "ann", "amount": 500, "category": "travel", "description": "train"}


async def _counts() -> tuple[int, int, int, int]:
    return (
        await Session.objects.acount(),
        await Event.objects.acount(),
        await Interrupt.objects.acount(),
        await AnswerAttempt.objects.acount(),
    )


async def test_start_runs_in_the_background_until_it_waits(engine_runtime: Runtime, alice: User) -> None:
    session_id = await starting.start_run("expense_approval", EXPENSE, user=alice)
    session = await settled(session_id, "waiting")
    assert session.created_by_id == alice.pk
    pending = [row async for row in Interrupt.objects.filter(session_id=session_id, status="pending")]
    assert [(row.interrupt_id, row.workflow) for row in pending] == [("manager-approval", "expense_approval")]
    assert pending[0].payload["amount"] == "500"
    assert pending[0].response_schema["required"] == ["approved"]


async def test_small_expense_completes_without_anyone(engine_runtime: Runtime) -> None:
    session_id = await starting.start_run("expense_approval", {**EXPENSE, "amount": 42})
    session = await settled(session_id, "completed")
    assert session.output["approved"] is True and session.output["decided_by"] == ["policy"]
    assert await Interrupt.objects.filter(session_id=session_id).acount() == 0


@pytest.mark.parametrize(
    ("workflow", "node_input", "error", "field"),
    [
        ("no_such_flow", {}, UnknownWorkflowError, None),
        ("expense_approval", {**EXPENSE, "amount": -5}, InputValidationError, "amount"),
        ("expense_approval", {**EXPENSE, "category": "yachts"}, InputValidationError, "category"),
        ("expense_approval", {"employee": "ann"}, InputValidationError, "amount"),
        ("batch_review", {"items": [{"sku": "a", "price": "cheap"}]}, InputValidationError, "items.0.price"),
    ],
)
async def test_bad_start_input_writes_nothing(
    engine_runtime: Runtime, workflow: str, node_input: object, error: type[Exception], field: str | None
) -> None:
    with pytest.raises(error) as refused:
        await starting.start_run(workflow, node_input)
    if field is not None:
        assert field in refused.value.field_errors  # type: ignore[attr-defined]
    assert await _counts() == (0, 0, 0, 0)


async def test_answer_resumes_the_run_in_the_background(engine_runtime: Runtime, alice: User) -> None:
    session_id = await starting.start_run("approval", {"n": 1})
    await settled(session_id, "waiting")
    await answering.answer_interrupt(session_id, "ok", {"approved": True, "comment": "yes"}, user=alice)
    session = await settled(session_id, "completed")
    assert session.output == {"approved": True}
    row = await Interrupt.objects.aget(session_id=session_id)
    assert (row.status, row.answered_by, row.answer) == (
        "answered",
        "alice",
        {"approved": True, "comment": "yes"},
    )
    attempts = [(a.actor, a.outcome) async for a in AnswerAttempt.objects.filter(session_id=session_id)]
    assert attempts == [("alice", "accepted")]
    assert flows.count("approval.prepare") == 1 and flows.count("approval.finish") == 1


async def test_late_answer_names_who_answered_first(engine_runtime: Runtime, alice: User, bob: User) -> None:
    session_id = await starting.start_run("approval", {"n": 2})
    await settled(session_id, "waiting")
    await answering.answer_interrupt(session_id, "ok", {"approved": True}, user=alice)
    await settled(session_id, "completed")
    before = await Event.objects.filter(session_id=session_id).acount()
    with pytest.raises(InterruptAlreadyAnswered) as late:
        await answering.answer_interrupt(session_id, "ok", {"approved": False}, user=bob)
    assert late.value.answered_by == "alice" and late.value.answered_at is not None
    assert await Event.objects.filter(session_id=session_id).acount() == before
    outcomes = [(a.actor, a.outcome) async for a in AnswerAttempt.objects.filter(session_id=session_id)]
    assert outcomes == [("alice", "accepted"), ("bob", "already_answered")]


async def test_late_answer_while_waiting_on_another_interrupt(
    engine_runtime: Runtime, alice: User, bob: User
) -> None:
    session_id = await starting.start_run("expense_approval", {**EXPENSE, "amount": 5000})
    await settled(session_id, "waiting")
    await answering.answer_interrupt(
        session_id, "manager-approval", {"approved": True}, user=alice, advance=False
    )
    with pytest.raises(InterruptAlreadyAnswered) as late:
        await answering.answer_interrupt(session_id, "manager-approval", {"approved": False}, user=bob)
    assert late.value.answered_by == "alice"


async def test_invalid_answer_changes_nothing(engine_runtime: Runtime, alice: User) -> None:
    session_id = await starting.start_run("approval", {"n": 3})
    await settled(session_id, "waiting")
    before = await Event.objects.filter(session_id=session_id).acount()
    with pytest.raises(InvalidAnswerError) as invalid:
        await answering.answer_interrupt(session_id, "ok", {"approved": "perhaps"}, user=alice)
    assert "approved" in invalid.value.field_errors
    assert await Event.objects.filter(session_id=session_id).acount() == before
    assert (await Interrupt.objects.aget(session_id=session_id)).status == "pending"
    assert [a.outcome async for a in AnswerAttempt.objects.filter(session_id=session_id)] == ["invalid"]


async def test_answer_refusals_for_unknown_targets_and_users(
    engine_runtime: Runtime, alice: User, mallory: User
) -> None:
    session_id = await starting.start_run("approval", {"n": 4})
    await settled(session_id, "waiting")
    before = await _counts()
    with pytest.raises(UnknownRunError):
        await answering.answer_interrupt("nope", "ok", {"approved": True}, user=alice)
    with pytest.raises(UnknownInterruptError):
        await answering.answer_interrupt(session_id, "nope", {"approved": True}, user=alice)
    with pytest.raises(NotPermitted):
        await answering.answer_interrupt(session_id, "ok", {"approved": True}, user=mallory)
    with pytest.raises(UnknownRunError):  # no one logged in: may not view it, so it does not exist
        await answering.answer_interrupt(session_id, "ok", {"approved": True}, user=None)
    assert (await _counts())[:3] == before[:3]  # nothing written but the audit of the refusals
    refusals = [(a.actor, a.outcome) async for a in AnswerAttempt.objects.filter(session_id=session_id)]
    assert refusals == [("mallory", "forbidden"), ("", "forbidden")]  # unknown targets are not audited


async def test_cancel_withdraws_pending_interrupts(engine_runtime: Runtime, alice: User) -> None:
    session_id = await starting.start_run("expense_approval", {**EXPENSE, "amount": 5000})
    await settled(session_id, "waiting")
    await interventions.cancel_run(session_id, user=alice)
    session = await settled(session_id, "cancelled")
    assert session.lease_owner is None
    statuses = {row.status async for row in Interrupt.objects.filter(session_id=session_id)}
    assert statuses == {"cancelled"}
    last = await Event.objects.filter(session_id=session_id).alatest("seq")
    assert (last.kind, last.data["status"], last.author) == ("status", "cancelled", "alice")
    with pytest.raises(RunStateError):
        await interventions.cancel_run(session_id, user=alice)
    with pytest.raises(Exception, match="cancelled"):
        await answering.answer_interrupt(session_id, "finance-approval", {"approved": True}, user=alice)


async def test_cancel_stops_a_run_in_flight(engine_runtime: Runtime, test_dir: Path) -> None:
    session_id = await starting.start_run("blocking", {"x": 1})
    await _wait_for(lambda: flows.count("blocking.wait") == 1)
    await interventions.cancel_run(session_id)
    session = await settled(session_id, "cancelled")
    assert session.status == "cancelled" and flows.count("blocking.last") == 0


async def test_retry_reruns_only_the_failed_node(engine_runtime: Runtime, test_dir: Path) -> None:
    session_id = await starting.start_run("flaky", {"n": 1})
    session = await settled(session_id, "failed")
    assert session.error["type"] == "RuntimeError" and "unavailable" in session.error["message"]
    (test_dir / "healthy").touch()
    await interventions.retry_run(session_id)
    session = await settled(session_id, "completed")
    assert session.output == {"ok": {"n": 1}} and session.error is None
    assert flows.count("flaky.step") == 2


async def test_retry_refuses_a_run_that_did_not_fail(engine_runtime: Runtime) -> None:
    session_id = await starting.start_run("approval", {"n": 5})
    await settled(session_id, "waiting")
    with pytest.raises(RunStateError, match="only a failed run"):
        await interventions.retry_run(session_id)
    with pytest.raises(UnknownRunError):
        await interventions.retry_run("missing")


async def _wait_for(condition: object, timeout: float = 10.0) -> None:
    import asyncio

    async with asyncio.timeout(timeout):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.02)
