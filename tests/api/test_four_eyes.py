"""Four-eyes by default (issue 24, item 10): a run's requester may not answer its approval
questions (a boolean ``approved`` field) unless the workflow lets them; other questions are theirs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.api.conftest import Api, event_kinds
from tests.api.flows import COMPUTED_PATH
from wfapp.models import AnswerAttempt, Interrupt


@pytest.fixture
def computed(settings: Any, workflows: None) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, COMPUTED_PATH]


def _manager_question(run: dict[str, Any]) -> dict[str, Any]:
    return next(q for q in run["pending"] if q["interrupt_id"] == "manager-approval")


async def test_the_requester_may_not_approve_their_own_run_by_default(
    waiting_run: Callable[..., Any], as_alice: Api, as_bob: Api
) -> None:
    run = await waiting_run()  # alice files the expense claim
    question = _manager_question(run)
    before = await event_kinds(run["id"])
    refused = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert refused.status_code == 403, refused.content
    problem = refused.json()
    assert problem["type"] == "/api/v1/problems/forbidden"
    assert "alice may not answer: alice started this run and may not approve it" in problem["detail"]
    assert await event_kinds(run["id"]) == before  # nothing written
    assert (await Interrupt.objects.aget(pk=question["id"])).status == "pending"
    attempt = await AnswerAttempt.objects.filter(session_id=run["id"]).alast()
    assert attempt is not None and (attempt.actor, attempt.outcome) == ("alice", "forbidden")
    claimed = await as_alice.post(f"interrupts/{question['id']}/claim")
    assert claimed.status_code == 403, claimed.content  # nor hold it to keep others out
    answered = await as_bob.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code in (200, 202), answered.content


async def test_a_workflow_may_let_its_requesters_approve(
    settings: Any, waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    question = _manager_question(await waiting_run())
    path = f"interrupts/{question['id']}/answer"
    assert (await as_alice.post(path, {"answer": {"approved": True}})).status_code == 403
    settings.WFAPP_REQUESTER_MAY_APPROVE = ["document_review", "expense_approval"]
    answered = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code in (200, 202), answered.content
    assert (await Interrupt.objects.aget(pk=question["id"])).answered_by == "alice"


async def test_a_question_that_is_no_approval_is_the_requesters_to_answer(
    computed: None, waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    approval = _manager_question(await waiting_run())
    refused = await as_alice.post(f"interrupts/{approval['id']}/answer", {"answer": {"approved": True}})
    assert refused.status_code == 403, refused.content
    run = await waiting_run("computed_questions", {"id": "count", "kind": "integer"})
    question = next(q for q in run["pending"] if q["interrupt_id"] == "count")
    answered = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": 3})
    assert answered.status_code in (200, 202), answered.content
    assert (await Interrupt.objects.aget(pk=question["id"])).answered_by == "alice"
