"""Issue 27, item 3, on the pages: a question of a failed run says the run failed instead of
offering its buttons; its answer is refused (409 "the run failed at <node>; retry it first") by
the form, bulk answers and answer links, never taken as a silent retry. A group that registered
workflows assign questions to is neither renamed nor deleted in the admin. Retry and cancel
reasons appear once in the timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from tests.web.conftest import client_for, pending
from wfapp.models import Event, Interrupt, Session
from wfapp.runs import answer_links

HX = {"HTTP_HX_REQUEST": "true"}
BOOK = "web_pay_beside_ledger@1/book_payment@1"
REFUSED = f"The run failed at {BOOK}; retry it first"


@pytest.fixture(autouse=True)
def _flows(settings: Any) -> None:
    settings.WFAPP_WORKFLOWS = [
        *settings.WFAPP_WORKFLOWS,
        "tests.web.flows:pay_beside_ledger",
        "tests.web.flows:orders",
    ]


@pytest.fixture
def failed_question(start_run: Any, tmp_path: Path) -> Interrupt:
    run = start_run("web_pay_beside_ledger", {"what": "invoice 7", "unlock_file": str(tmp_path / "open")})
    assert Session.objects.get(pk=run).status == "failed"
    (question,) = pending(run)
    return question


def _kinds(run: str) -> list[str]:
    return list(Event.objects.filter(session_id=run).order_by("seq").values_list("kind", flat=True))


def test_a_failed_runs_question_says_so_and_refuses_answers_everywhere(
    failed_question: Interrupt, operator_client: Client, operator: User, settings: Any
) -> None:
    run = failed_question.session_id
    before = _kinds(run)
    card = operator_client.get(reverse("inbox"), {"q": "invoice 7"}).content.decode()
    assert f"{REFUSED}: this question waits until then." in card
    assert f'id="answer-interrupt-{failed_question.pk}"' not in card  # no form, no buttons
    page = operator_client.get(reverse("interrupt", args=[failed_question.pk])).content.decode()
    assert REFUSED in page

    answered = operator_client.post(
        reverse("answer", args=[failed_question.pk]), {"f.approved": "true"}, **HX
    )
    assert answered.status_code == 409
    assert f"{REFUSED}. Your answer was not recorded." in answered.content.decode()
    bulk = operator_client.post(
        reverse("bulk-answer"), {"decision": "approve", "ids": [str(failed_question.pk)]}, **HX
    )
    assert REFUSED in bulk.content.decode()

    settings.WFAPP_ANSWER_LINKS, settings.WFAPP_BASE_URL = True, "http://testserver"
    url = answer_links.issue(failed_question.pk, operator)
    assert url is not None
    link = Client().get(url.removeprefix("http://testserver"))
    assert link.status_code == 410 and REFUSED in link.content.decode()

    assert _kinds(run) == before  # neither an answer nor a retry was written
    assert Session.objects.get(pk=run).status == "failed"
    assert Interrupt.objects.get(pk=failed_question.pk).status == "pending"


def test_retry_and_cancel_reasons_show_once_in_the_timeline(start_run: Any, operator_client: Client) -> None:
    failed = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    retried = operator_client.post(reverse("run-retry", args=[failed]), {"reason": "ledger unlocked at 9:40"})
    assert retried.status_code in (200, 302), retried.content
    waiting = start_run()
    cancelled = operator_client.post(reverse("run-cancel", args=[waiting]), {"reason": "duplicate of run 12"})
    assert cancelled.status_code in (200, 302), cancelled.content
    assert _timeline(operator_client, failed).count("ledger unlocked at 9:40") == 1
    assert _timeline(operator_client, waiting).count("duplicate of run 12") == 1


def _timeline(client: Client, run: str) -> str:
    page = client.get(reverse("run", args=[run])).content.decode()
    return page.split('id="timeline"', 1)[1].split("</ol>", 1)[0]


def test_a_group_that_workflows_assign_questions_to_is_kept_in_the_admin(start_run: Any) -> None:
    start_run()  # the expense demo asks group:managers and group:finance
    root = User.objects.create_superuser("root", password="pw-root")
    admin = client_for(root)
    managers = Group.objects.get(name="managers")
    renamed = admin.post(
        reverse("admin:auth_group_change", args=[managers.pk]), {"name": "line-managers", "permissions": []}
    )
    assert renamed.status_code == 200  # the form again, with the error
    assert (
        "Registered workflows assign questions to the group &#x27;managers&#x27;" in renamed.content.decode()
    )
    assert "expense_approval&#x27;s &#x27;manager-approval&#x27;" in renamed.content.decode()
    deleted = admin.post(reverse("admin:auth_group_delete", args=[managers.pk]), {"post": "yes"})
    assert "which registered workflows assign to" in deleted.content.decode()
    assert Group.objects.filter(name="managers").exists()
    spare = Group.objects.create(name="spare")
    admin.post(reverse("admin:auth_group_change", args=[spare.pk]), {"name": "spare-2", "permissions": []})
    assert Group.objects.filter(name="spare-2").exists()  # a group no workflow uses changes as before
