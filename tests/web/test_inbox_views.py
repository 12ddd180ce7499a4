"""The inbox page and answering: full page, htmx fragments, 422/409/413/404, bulk answers."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.web.conftest import BIG_EXPENSE, client_for, pending
from wfapp.models import AnswerAttempt, Interrupt, InterruptStatus

HX = {"HTTP_HX_REQUEST": "true"}


def test_inbox_lists_pending_questions_with_answer_forms(operator_client: Client, start_run) -> None:
    run = start_run()
    response = operator_client.get(reverse("inbox"))
    assert response.status_code == 200
    html = response.content.decode()
    rows = pending(run)
    assert len(rows) == 2
    for row in rows:
        assert f'id="interrupt-{row.pk}"' in html
        assert reverse("answer", args=[row.pk]) in html
    assert "Manager approval: Ann claims 1500" in html
    assert 'name="f.approved" value="true"' in html  # Approve / Reject buttons
    assert 'id="inbox-count"' in html and ">2</span>" in html
    assert 'ws-connect="/ws/inbox/"' in html


def test_inbox_is_empty_without_the_permission(viewer_client: Client, start_run) -> None:
    start_run()
    html = viewer_client.get(reverse("inbox")).content.decode()
    assert "Nothing is waiting for you" in html
    assert "interrupt-" not in html


def test_login_is_required(client: Client, db: None) -> None:
    response = client.get(reverse("inbox"))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))


def test_filters_return_the_list_fragment(operator_client: Client, start_run) -> None:
    start_run()
    start_run(node_input={**BIG_EXPENSE, "amount": 500, "employee": "Bo"})
    response = operator_client.get(reverse("inbox"), {"q": "finance"}, **HX)
    html = response.content.decode()
    assert html.lstrip().startswith('<section id="inbox-list"')
    assert "<html" not in html
    assert html.count('class="card inbox-item"') == 1
    assert "Finance approval" in html
    # The page's socket is replaced by one that knows the new filters.
    assert 'id="live" hx-ext="ws" ws-connect="/ws/inbox/?q=finance"' in html
    assert 'id="live-hello" hidden data-hello=\'{"watermark": ' in html


def test_answer_records_and_closes_the_item(operator_client: Client, operator, start_run) -> None:
    run = start_run()
    row = pending(run)[0]
    response = operator_client.post(
        reverse("answer", args=[row.pk]), {"f.approved": "true", "f.comment": "ok <b>"}, **HX
    )
    assert response.status_code == 200
    assert response["HX-Retarget"] == f"#interrupt-{row.pk}"
    html = response.content.decode()
    assert "Answered by olga" in html
    assert "&lt;b&gt;" in html and "<b>" not in html
    row.refresh_from_db()
    assert (row.status, row.answer, row.answered_by) == (
        "answered",
        {"approved": True, "comment": "ok <b>"},
        "olga",
    )


def test_invalid_answer_is_422_with_field_errors_and_changes_nothing(
    operator_client: Client, start_run
) -> None:
    run = start_run()
    row = pending(run)[0]
    response = operator_client.post(reverse("answer", args=[row.pk]), {"f.comment": "typed text"}, **HX)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Choose Approve or Reject." in html
    assert 'value="typed text"' in html
    row.refresh_from_db()
    assert row.status == InterruptStatus.PENDING
    assert not AnswerAttempt.objects.filter(outcome="accepted").exists()


def test_late_answer_is_409_naming_who_answered(operator_client: Client, other_operator, start_run) -> None:
    run = start_run()
    row = pending(run)[0]
    first = client_for(other_operator).post(reverse("answer", args=[row.pk]), {"f.approved": "false"}, **HX)
    assert first.status_code == 200
    late = operator_client.post(reverse("answer", args=[row.pk]), {"f.approved": "true"}, **HX)
    assert late.status_code == 409
    assert "Already answered by piet" in late.content.decode()
    row.refresh_from_db()
    assert row.answer == {"approved": False, "comment": ""} or row.answer == {"approved": False}
    assert AnswerAttempt.objects.filter(outcome="already_answered", actor="olga").count() == 1


def test_no_permission_is_404(viewer_client: Client, start_run) -> None:
    row = pending(start_run())[0]
    assert viewer_client.get(reverse("interrupt", args=[row.pk])).status_code == 404
    assert viewer_client.post(reverse("answer", args=[row.pk]), {"f.approved": "true"}).status_code == 404
    assert Interrupt.objects.get(pk=row.pk).status == InterruptStatus.PENDING


def test_oversized_answer_is_413(operator_client: Client, start_run, settings) -> None:
    settings.WFAPP_MAX_ANSWER_BYTES = 1000
    row = pending(start_run())[0]
    response = operator_client.post(
        reverse("answer", args=[row.pk]), {"f.approved": "true", "f.comment": "x" * 2000}, **HX
    )
    assert response.status_code == 413
    assert (response["HX-Retarget"], response["HX-Reswap"]) == (f"#answer-interrupt-{row.pk}", "afterbegin")
    assert "That answer is too large (2 KB): the limit is 1000 bytes. Shorten it" in response.content.decode()
    assert Interrupt.objects.get(pk=row.pk).status == InterruptStatus.PENDING


def test_direct_link_shows_the_question(operator_client: Client, start_run) -> None:
    row = pending(start_run())[0]
    response = operator_client.get(reverse("interrupt", args=[row.pk]))
    assert response.status_code == 200
    assert row.message in response.content.decode()


def test_answer_without_htmx_redirects(operator_client: Client, start_run) -> None:
    row = pending(start_run())[0]
    response = operator_client.post(reverse("answer", args=[row.pk]), {"f.approved": "true"})
    assert response.status_code == 302


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_bulk_answers_each_item_and_reports(operator_client: Client, start_run, decision: str) -> None:
    runs = [start_run(node_input={**BIG_EXPENSE, "amount": 500, "employee": f"E{i}"}) for i in range(3)]
    rows = [pending(run)[0] for run in runs]
    reason = {"reason": "Over budget"} if decision == "reject" else {}  # the answer has a field for it
    response = operator_client.post(
        reverse("bulk-answer"), {"decision": decision, "ids": [str(r.pk) for r in rows], **reason}, **HX
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("Approved." if decision == "approve" else "Rejected: Over budget") == 3
    for row in rows:
        row.refresh_from_db()
        assert row.status == InterruptStatus.ANSWERED
        assert row.answer == {"approved": decision == "approve", "comment": reason.get("reason", "")}
        assert f'id="interrupt-{row.pk}" hx-swap-oob="true"' in html


def test_filters_matching_nothing_say_so_and_offer_to_clear(operator_client: Client, start_run) -> None:
    start_run()
    html = operator_client.get(reverse("inbox"), {"q": "no such words"}).content.decode()
    assert "No pending question matches these filters." in html
    assert "Nothing is waiting for you" not in html
    assert f'<a href="{reverse("inbox")}">Clear the filters</a>' in html


def test_bulk_beyond_the_limit_says_what_was_left(operator_client: Client, start_run) -> None:
    row = pending(start_run(node_input={**BIG_EXPENSE, "amount": 500}))[0]
    ids = [str(row.pk)] + [str(10_000 + n) for n in range(204)]  # 205 ticked, the limit is 200
    response = operator_client.post(reverse("bulk-answer"), {"decision": "approve", "ids": ids}, **HX)
    html = response.content.decode()
    assert "Only the first 200 ticked items were answered; 5 more are still pending: send them again." in html
    row.refresh_from_db()
    assert row.status == InterruptStatus.ANSWERED
