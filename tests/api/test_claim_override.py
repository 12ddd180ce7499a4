"""Issue 27, item 4, through the API: an answer over another user's claim needs
``override_claim: true`` (409 "bob holds this: answer anyway?" without it, nothing written);
the override is recorded, and the closed question says over whose claim it was given."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission

from tests.api.conftest import Api, event_kinds, token_for
from tests.wfapp.conftest import _user
from wfapp.models import AnswerAttempt, Event, Interrupt


def _manager_question(run: dict[str, Any]) -> dict[str, Any]:
    return next(q for q in run["pending"] if q["interrupt_id"] == "manager-approval")


async def test_answering_over_a_claim_needs_its_confirmation_and_is_recorded(
    waiting_run: Callable[..., Any], as_bob: Api, transactional_db: None
) -> None:
    rita = await sync_to_async(_user)("rita", may_answer=True)  # in the demo's groups, as bob
    await rita.user_permissions.aadd(await Permission.objects.aget(codename="reassign_interrupt"))
    as_rita = Api(await sync_to_async(token_for)(rita))
    question = _manager_question(await waiting_run())
    assert (await as_bob.post(f"interrupts/{question['id']}/claim")).status_code == 200
    before = await event_kinds(question["run"])

    refused = await as_rita.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert refused.status_code == 409, refused.content
    problem = refused.json()
    assert (problem["type"], problem["claimed_by"]) == ("/api/v1/problems/claimed", "bob")
    assert problem["detail"].startswith("bob holds this: answer anyway?")
    assert "override_claim" in problem["detail"]
    assert await event_kinds(question["run"]) == before
    attempt = await AnswerAttempt.objects.filter(session_id=question["run"]).alast()
    assert attempt is not None and (attempt.actor, attempt.outcome) == ("rita", "forbidden")

    body = {"answer": {"approved": True}, "override_claim": True}
    answered = await as_rita.post(f"interrupts/{question['id']}/answer", body)
    assert answered.status_code in (200, 202), answered.content
    row = await Interrupt.objects.aget(pk=question["id"])
    assert (row.status, row.answered_by, row.claimed_by) == ("answered", "rita", "bob")
    note = await Event.objects.aget(session_id=question["run"], kind="comment")
    assert (note.author, note.data["message"]) == ("rita", "Answered over bob's claim.")


async def test_a_holder_or_an_unclaimed_question_needs_no_override(
    waiting_run: Callable[..., Any], as_bob: Api
) -> None:
    question = _manager_question(await waiting_run())
    assert (await as_bob.post(f"interrupts/{question['id']}/claim")).status_code == 200
    taken = await as_bob.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": False}})
    assert taken.status_code in (200, 202), taken.content
    assert not await Event.objects.filter(session_id=question["run"], kind="comment").aexists()
