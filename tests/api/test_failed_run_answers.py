"""Issue 27, item 3, through the API: an answer to a question of a failed run is refused (409,
"the run failed at <node>; retry it first"), never taken as a silent retry of the failed node;
after an explicit retry the question is answered as any other."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.api.conftest import Api, event_kinds
from tests.wfapp.helpers import settled
from wfapp.models import AnswerAttempt, Interrupt

FLOW = "tests.web.flows:pay_beside_ledger"
BOOK = "web_pay_beside_ledger@1/book_payment@1"


@pytest.fixture(autouse=True)
def _flow(settings: Any, workflows: None) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, FLOW]


async def test_an_answer_to_a_failed_runs_question_is_refused_until_it_is_retried(
    engine_runtime: Any, as_alice: Api, as_bob: Api, tmp_path: Path
) -> None:
    unlock = tmp_path / "unlocked"
    body = {"input": {"what": "invoice 7", "unlock_file": str(unlock)}}
    started = await as_alice.post("workflows/web_pay_beside_ledger/runs", body)
    assert started.status_code == 201, started.content
    run_id = started.json()["id"]
    await settled(run_id, "failed")
    question = await Interrupt.objects.aget(session_id=run_id, interrupt_id="pay")
    assert question.status == "pending"
    before = await event_kinds(run_id)

    refused = await as_bob.post(f"interrupts/{question.pk}/answer", {"answer": {"approved": True}})
    assert refused.status_code == 409, refused.content
    problem = refused.json()
    assert problem["type"] == "/api/v1/problems/run-state"
    assert problem["detail"] == f"The run failed at {BOOK}; retry it first"
    assert await event_kinds(run_id) == before  # no answer, no retry: nothing written
    assert (await as_bob.get(f"runs/{run_id}")).json()["status"] == "failed"
    attempt = await AnswerAttempt.objects.filter(session_id=run_id).alast()
    assert attempt is not None and (attempt.actor, attempt.outcome) == ("bob", "refused")

    unlock.touch()
    assert (await as_bob.post(f"runs/{run_id}/retry")).status_code == 202
    await settled(run_id, "waiting")
    answered = await as_bob.post(f"interrupts/{question.pk}/answer", {"answer": {"approved": True}})
    assert answered.status_code in (200, 202), answered.content
    done = await settled(run_id, "completed")
    assert done.output == {"ask_to_pay": {"approved": True}, "book_payment": {"booked": "invoice 7"}}
