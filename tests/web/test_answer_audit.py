"""Every attempt on a known question through the dashboard is audited, whatever refused it."""

from __future__ import annotations

from django.test import Client
from django.urls import reverse

from tests.web.conftest import BIG_EXPENSE, pending
from wfapp.human.audit import PREVIEW, digest
from wfapp.models import AnswerAttempt, InterruptStatus

HX = {"HTTP_HX_REQUEST": "true"}


def _attempts(session_id: str) -> list[tuple[str, str, object]]:
    rows = AnswerAttempt.objects.filter(session_id=session_id).order_by("pk")
    return [(a.actor, a.outcome, a.value) for a in rows]


def test_a_form_refused_by_validation_is_audited_with_what_was_sent(
    operator_client: Client, start_run
) -> None:
    run = start_run()
    row = pending(run)[0]
    response = operator_client.post(reverse("answer", args=[row.pk]), {"f.comment": "typed text"}, **HX)
    assert response.status_code == 422
    assert _attempts(run) == [("olga", "invalid", {"f.comment": "typed text"})]
    detail = AnswerAttempt.objects.get(session_id=run).detail
    assert "Choose Approve or Reject." in detail
    # Adding or removing a row of a list is editing, not an answer: nothing to audit.


def test_an_answer_over_the_size_limit_is_audited(operator_client: Client, start_run, settings) -> None:
    settings.WFAPP_MAX_ANSWER_BYTES = 1000
    run = start_run()
    row = pending(run)[0]
    response = operator_client.post(
        reverse("answer", args=[row.pk]), {"f.approved": "true", "f.comment": "x" * 2000}, **HX
    )
    assert response.status_code == 413
    assert _attempts(run) == [("olga", "too_large", None)]
    assert "the limit is 1000 bytes" in AnswerAttempt.objects.get(session_id=run).detail


def test_an_attempt_without_the_permission_is_404_and_audited(viewer_client: Client, start_run) -> None:
    run = start_run()
    row = pending(run)[0]
    response = viewer_client.post(reverse("answer", args=[row.pk]), {"f.approved": "true"}, **HX)
    assert response.status_code == 404  # a question you may not answer is not shown to exist
    assert _attempts(run) == [("vera", "forbidden", digest({"f.approved": "true"}))]
    assert (
        viewer_client.post(reverse("answer", args=[row.pk + 999]), {"f.approved": "true"}).status_code == 404
    )
    assert AnswerAttempt.objects.count() == 1  # an unknown question has no history to add to
    row.refresh_from_db()
    assert row.status == InterruptStatus.PENDING


def test_bulk_attempts_are_audited_one_by_one(
    operator_client: Client, viewer_client: Client, start_run, settings
) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:free_text"]
    runs = [start_run(node_input={**BIG_EXPENSE, "amount": 500, "employee": f"E{i}"}) for i in range(2)]
    rows = [pending(run)[0] for run in runs]
    ids = [str(row.pk) for row in rows]
    refused = viewer_client.post(reverse("bulk-answer"), {"decision": "approve", "ids": ids}, **HX)
    assert refused.status_code == 409
    assert [_attempts(run) for run in runs] == [[("vera", "forbidden", digest({"decision": "approve"}))]] * 2

    full_form = start_run("web_free_text", {})
    needs_form = pending(full_form)[0]
    done = operator_client.post(
        reverse("bulk-answer"), {"decision": "approve", "ids": [*ids, str(needs_form.pk)]}, **HX
    )
    assert done.status_code == 200
    assert "needs the full form" in done.content.decode()
    assert [_attempts(run)[-1][:2] for run in runs] == [("olga", "accepted")] * 2
    assert _attempts(full_form) == [("olga", "invalid", {"decision": "approve"})]
    again = operator_client.post(reverse("bulk-answer"), {"decision": "reject", "ids": ids}, **HX)
    assert "Already answered by olga" in again.content.decode()
    assert [_attempts(run)[-1][:2] for run in runs] == [("olga", "already_answered")] * 2


def test_a_forbidden_attempt_keeps_a_digest_and_a_preview_not_the_value(
    viewer_client: Client, start_run
) -> None:
    run = start_run()
    row = pending(run)[0]
    sent = {"f.approved": "true", "f.comment": "x" * 60_000}  # under the size limit
    response = viewer_client.post(reverse("answer", args=[row.pk]), sent, **HX)
    assert response.status_code == 404
    [(actor, outcome, kept)] = _attempts(run)
    assert (actor, outcome) == ("vera", "forbidden")
    assert set(kept) == {"sha256", "bytes", "preview"} and kept["bytes"] > 60_000
    assert len(kept["preview"]) == PREVIEW and kept["preview"].startswith('{"f.approved": "true"')
    assert kept == digest(sent)
