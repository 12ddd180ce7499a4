"""Reject with reason: an approve/reject question's outcome whose reason is required and shown,
from the inbox form, the CLI and the API; refused (and nothing recorded) without its reason."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.web.conftest import client_for, make_user, pending
from wfapp.errors import RejectionReasonError
from wfapp.models import Event, Interrupt, InterruptStatus
from wfapp.runs import answering, bulk
from wfapp.web import presenter

FLAGGED = {"items": [{"sku": "RED-1", "price": 12, "flagged": True}]}


def _form(question: Any, **fields: str) -> dict[str, str]:
    return {"_outcome": "reject-with-reason", **fields}


def _reject(question: Any, reason: str) -> dict[str, str]:
    """The card's one way: the reason typed in its one reason field, then Reject."""
    return {"f.approve": "false", "_reason": reason}


def test_the_form_rejects_with_the_reason_in_the_answer(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    run = start_run("expense_approval")
    [question, *_] = pending(run)
    page = client_for(olga).get(f"/interrupts/{question.pk}/").content.decode()
    assert 'name="_reason"' not in page  # its Comment is the one reason field
    response = client_for(olga).post(
        f"/interrupts/{question.pk}/answer/", _form(question, _reason="Over budget")
    )
    assert response.status_code in (200, 302)
    question.refresh_from_db()
    assert question.status == InterruptStatus.ANSWERED
    assert question.answer == {"approved": False, "comment": "Over budget"}
    entries = presenter.run_context(question.session, olga)["entries"]
    assert any(e.kind == "answer" and "Over budget" in e.detail for e in entries)


def test_without_its_reason_nothing_is_recorded(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    run = start_run("expense_approval")
    [question, *_] = pending(run)
    response = client_for(olga).post(f"/interrupts/{question.pk}/answer/", _form(question, _reason="   "))
    assert response.status_code == 422
    assert "needs the reason" in response.content.decode()
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING


def test_a_reason_the_answer_has_no_field_for_is_a_comment_on_the_question(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    run = start_run("batch_review", FLAGGED)
    [question] = pending(run)
    response = client_for(olga).post(
        f"/interrupts/{question.pk}/answer/", _form(question, _reason="Wrong colour")
    )
    assert response.status_code in (200, 302)
    question.refresh_from_db()
    assert question.answer == {"approve": False}
    kinds = list(Event.objects.filter(session_id=run).order_by("seq").values_list("kind", "data__message"))
    answer_at = [k for k, _ in kinds].index("answer")
    assert ("comment", "Rejected: Wrong colour") in kinds[answer_at:]


def test_the_one_reason_field_goes_with_reject_and_its_error_sits_on_it(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    run = start_run("batch_review", FLAGGED)
    [question] = pending(run)
    page = client_for(olga).get(f"/interrupts/{question.pk}/").content.decode()
    assert page.count('name="_reason"') == 1 and "Reject with reason" not in page
    approve = {"f.approve": "true", "_reason": "Wrong colour"}
    refused = client_for(olga).post(
        f"/interrupts/{question.pk}/answer/", approve, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 422
    html = refused.content.decode()
    field = html[html.index("<textarea") : html.index("</textarea>")]
    assert 'aria-invalid="true"' in field and "Wrong colour" in field  # kept, and marked
    error_id = field.split('aria-describedby="')[1].split('"')[0]
    assert f'id="{error_id}">A reason goes with a rejection' in html
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING
    done = client_for(olga).post(f"/interrupts/{question.pk}/answer/", _reject(question, "Wrong colour"))
    assert done.status_code in (200, 302)
    texts = Event.objects.filter(session_id=run, kind="comment").values_list("data__message", flat=True)
    assert list(texts) == ["Rejected: Wrong colour"]


def test_a_reason_needs_a_rejection_of_an_approve_reject_question(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    run = start_run("expense_approval")
    [question, *_] = pending(run)
    answer = async_to_sync(answering.answer_interrupt)
    with pytest.raises(RejectionReasonError, match="does not reject"):
        answer(run, question.interrupt_id, {"approved": True}, user=olga, reason="fine")
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING


def test_the_cli_rejects_with_a_reason(transactional_db: None, start_run: Any) -> None:
    make_user("olga", may_answer=True)
    run = start_run("batch_review", FLAGGED)
    [question] = pending(run)
    reject = ["wf", "answer", run, question.interrupt_id, "--answer", '{"approve": false}', "--user", "olga"]
    with pytest.raises(CommandError, match="needs the reason"):
        call_command(*reject, "--reason", "")
    call_command(*reject, "--reason", "Dented")
    texts = list(Event.objects.filter(session_id=run, kind="comment").values_list("data__message", flat=True))
    assert texts == ["Rejected: Dented"]


async def test_the_api_takes_a_reason(transactional_db: None) -> None:
    from asgiref.sync import sync_to_async

    from tests.api.conftest import Api, token_for
    from tests.web.test_consumers import start

    olga = await sync_to_async(make_user)("olga", may_answer=True)
    run = await start(None)  # not olga's own run: she may answer it
    api = Api(await sync_to_async(token_for)(olga))
    question = (await api.get(f"runs/{run}")).json()["pending"][0]
    wrong = await api.post(
        f"interrupts/{question['id']}/answer", {"answer": {"approved": True}, "reason": "x"}
    )
    assert wrong.status_code == 422
    assert wrong.json()["errors"][0]["field"] == "reason"
    done = await api.post(
        f"interrupts/{question['id']}/answer", {"answer": {"approved": False}, "reason": "Receipt missing"}
    )
    assert done.status_code in (200, 202), done.content
    assert done.json()["question"]["answer"] == {"approved": False, "comment": "Receipt missing"}


def _bulk_rows(olga: Any, *runs: str) -> tuple[list[int], dict[int, Any]]:
    rows = [pending(run)[0] for run in runs]
    return [row.pk for row in rows], {row.pk: row for row in rows}


def test_a_bulk_rejection_carries_its_reason_to_each_question(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    expense, flagged = start_run("expense_approval"), start_run("batch_review", FLAGGED)
    ids, rows = _bulk_rows(olga, expense, flagged)
    done = bulk.answer(ids, rows, False, user=olga, reason="  Over budget ")
    assert [(r.ok, r.text.endswith(": Rejected: Over budget")) for r in done] == [(True, True)] * 2
    [with_field, without] = [Interrupt.objects.get(pk=pk) for pk in ids]
    assert with_field.answer == {"approved": False, "comment": "Over budget"}  # in the answer
    assert without.answer == {"approve": False}  # no field for it: the question's comment
    comments = Event.objects.filter(session_id=flagged, kind="comment").values_list(
        "data__message", flat=True
    )
    assert list(comments) == ["Rejected: Over budget"]
    entries = presenter.run_context(with_field.session, olga)["entries"]
    assert any(e.kind == "answer" and "Over budget" in e.detail for e in entries)


@pytest.mark.parametrize(
    ("approve", "reason", "refusal"),
    [
        pytest.param(False, "   ", "Rejecting these needs a reason: expense_approval", id="reason-missing"),
        pytest.param(True, "fine", "A reason goes with a rejection", id="reason-with-approvals"),
    ],
)
def test_a_bulk_decision_with_a_wrong_reason_answers_nothing(
    db: None, start_run: Any, approve: bool, reason: str, refusal: str
) -> None:
    olga = make_user("olga", may_answer=True)
    ids, rows = _bulk_rows(olga, start_run("batch_review", FLAGGED), start_run("expense_approval"))
    with pytest.raises(RejectionReasonError, match=refusal):
        bulk.answer(ids, rows, approve, user=olga, reason=reason)
    assert [row.status for row in Interrupt.objects.filter(pk__in=ids)] == [InterruptStatus.PENDING] * 2
    response = client_for(olga).post(
        "/inbox/bulk/", {"decision": "approve" if approve else "reject", "ids": ids, "reason": reason},
        HTTP_HX_REQUEST="true",
    )  # fmt: skip
    assert response.status_code == 422 and refusal in response.content.decode()
    assert [row.status for row in Interrupt.objects.filter(pk__in=ids)] == [InterruptStatus.PENDING] * 2
