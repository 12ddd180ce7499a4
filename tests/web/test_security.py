"""The dashboard's security: per-action permissions on pages and actions, safe redirects."""

from __future__ import annotations

from django.contrib.auth.models import Permission, User
from django.test import Client
from django.urls import reverse

from tests.web.conftest import BIG_EXPENSE, client_for, pending
from wfapp.models import Session

HX = {"HTTP_HX_REQUEST": "true"}


def _user_with(username: str, *codenames: str) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="wfapp", codename__in=codenames)
    )
    return User.objects.get(pk=user.pk)


# -- permissions ----------------------------------------------------------------------------------


def test_pages_hide_the_start_form_and_link_without_the_permission(db: None) -> None:
    answerer = client_for(_user_with("ann", "answer_interrupt"))
    listing = answerer.get(reverse("workflows")).content.decode()
    assert "Start a run</a>" not in listing
    page = answerer.get(reverse("workflow", args=["expense_approval"])).content.decode()
    assert 'id="start-form"' not in page and "Can start runs" in page

    starter = client_for(_user_with("sam", "start_run"))
    assert "Start a run</a>" in starter.get(reverse("workflows")).content.decode()
    assert 'id="start-form"' in starter.get(reverse("workflow", args=["expense_approval"])).content.decode()


def test_starting_without_the_permission_is_403_and_starts_nothing(db: None) -> None:
    answerer = client_for(_user_with("ann", "answer_interrupt", "cancel_run", "retry_run"))
    response = answerer.post(reverse("workflow-start", args=["expense_approval"]), BIG_EXPENSE, **HX)
    assert response.status_code == 403
    assert "ann may not start runs of &#x27;expense_approval&#x27;" in response.content.decode()
    assert Session.objects.count() == 0
    plain = answerer.post(reverse("workflow-start", args=["expense_approval"]), {})  # not even validated
    assert plain.status_code == 403 and Session.objects.count() == 0


def test_run_page_hides_cancel_without_the_permission_and_refuses_it(db: None, start_run) -> None:
    run = start_run()
    viewer = client_for(_user_with("vic", "answer_interrupt", "start_run", "retry_run"))
    html = viewer.get(reverse("run", args=[run])).content.decode()
    assert "Cancel run" not in html
    response = viewer.post(reverse("run-cancel", args=[run]), **HX)
    assert response.status_code == 403 and "vic may not cancel runs" in response.content.decode()
    assert Session.objects.get(pk=run).status == "waiting"

    canceller = client_for(_user_with("cal", "cancel_run"))
    assert "Cancel run" in canceller.get(reverse("run", args=[run])).content.decode()
    assert canceller.post(reverse("run-cancel", args=[run]), **HX).status_code == 200
    assert Session.objects.get(pk=run).status == "cancelled"


def test_run_page_hides_retry_without_the_permission_and_refuses_it(db: None, start_run, settings) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:broken"]
    run = start_run("web_broken", {"any": "input"})
    assert Session.objects.get(pk=run).status == "failed"
    viewer = client_for(_user_with("vic", "answer_interrupt", "start_run", "cancel_run"))
    html = viewer.get(reverse("run", args=[run])).content.decode()
    assert "Retry failed nodes" not in html and "Cancel run" in html
    response = viewer.post(reverse("run-retry", args=[run]), **HX)
    assert response.status_code == 403 and "vic may not retry runs" in response.content.decode()
    retrier = client_for(_user_with("rey", "retry_run"))
    assert "Retry failed nodes" in retrier.get(reverse("run", args=[run])).content.decode()


# -- redirects ------------------------------------------------------------------------------------


def _answer(client: Client, pk: int, next_url: str) -> str:
    response = client.post(reverse("answer", args=[pk]), {"f.approved": "true", "next": next_url})
    assert response.status_code == 302
    return str(response["Location"])


def test_answer_next_goes_only_to_this_site(operator_client: Client, start_run) -> None:
    for hostile in (
        "https://evil.example/steal",
        "//evil.example/steal",
        "/\\evil.example",
        "javascript:alert(1)",
        "http://testserver.evil.example/",
    ):
        row = pending(start_run())[0]
        assert _answer(operator_client, row.pk, hostile) == reverse("inbox"), hostile
    row = pending(start_run())[0]
    assert _answer(operator_client, row.pk, f"/runs/{row.session_id}/") == f"/runs/{row.session_id}/"
    row = pending(start_run())[0]
    assert _answer(operator_client, row.pk, "http://testserver/runs/") == "http://testserver/runs/"
