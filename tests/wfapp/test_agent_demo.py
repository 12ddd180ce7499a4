"""The support-triage demo through the Django runtime: an agent waits for a refund approval."""

from __future__ import annotations

from django.contrib.auth.models import User

from tests.wfapp.helpers import settled
from wfapp.models import Event, Interrupt
from wfapp.runs import answering, starting
from wfapp.runs.runtime import Runtime

TICKET = {"customer": "Ada", "order_id": "A100", "message": "My kettle arrived broken."}


async def test_the_agent_waits_for_approval_and_finishes_after_it(
    engine_runtime: Runtime, alice: User, bob: User
) -> None:
    session_id = await starting.start_run("support_triage", TICKET, user=bob)  # alice approves: not her run
    await settled(session_id, "waiting")
    row = await Interrupt.objects.aget(session_id=session_id, status="pending")
    assert row.payload["tool"] == "issue_refund"
    assert row.payload["arguments"] == {"order_id": "A100", "amount": 39.0, "reason": "arrived damaged"}
    steps_before = await Event.objects.filter(
        session_id=session_id, kind="completed", node_path__contains="/model@"
    ).acount()

    await answering.answer_interrupt(session_id, row.interrupt_id, {"approved": True}, user=alice)
    session = await settled(session_id, "completed")

    assert session.output == {
        "reply": "Good news: Refunded 39.00 on order A100 (arrived damaged). We are sorry about the damage.",
        "closed": True,
    }
    steps_after = await Event.objects.filter(
        session_id=session_id, kind="completed", node_path__contains="/model@"
    ).acount()
    assert (steps_before, steps_after) == (2, 3)  # the resume asked the model once more, not three times
    answer = await Event.objects.aget(session_id=session_id, kind="answer")
    assert answer.data["answer"]["actor"] == "alice"


async def test_a_bad_ticket_is_refused_before_anything_runs(engine_runtime: Runtime) -> None:
    import pytest

    from wfapp.errors import InputValidationError

    with pytest.raises(InputValidationError) as refused:
        await starting.start_run("support_triage", {"customer": "Ada", "order_id": "", "message": "hi"})
    assert "order_id" in refused.value.field_errors
