"""The site's frame: login required everywhere but the login page; the admin user command."""

from __future__ import annotations

from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client


def test_login_page_is_public_and_the_rest_requires_login(transactional_db: None, client: Client) -> None:
    page = client.get("/login/")
    assert page.status_code == 200 and b'name="password"' in page.content
    for url in ("/", "/admin/"):
        response = client.get(url)
        assert response.status_code == 302 and "login" in response["Location"]


def test_static_files_are_served_without_debug(
    transactional_db: None, client: Client, settings: object
) -> None:
    assert settings.DEBUG is False  # type: ignore[attr-defined]
    response = client.get("/static/admin/css/base.css")
    assert response.status_code == 200


def test_admin_lists_runs_events_and_interrupts(admin_client: Client) -> None:
    for model in ("session", "event", "interrupt", "answerattempt"):
        assert admin_client.get(f"/admin/wfapp/{model}/").status_code == 200
    assert admin_client.get("/admin/wfapp/event/add/").status_code == 403


def test_ensure_admin_generates_a_password_once(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WFAPP_ADMIN_PASSWORD", raising=False)
    out = StringIO()
    call_command("ensure_admin", stdout=out)
    password = out.getvalue().split("password: ")[1].split()[0]
    admin = User.objects.get(username="admin")
    assert admin.is_superuser and admin.check_password(password)
    again = StringIO()
    call_command("ensure_admin", stdout=again)
    assert again.getvalue() == ""  # shown only once

    monkeypatch.setenv("WFAPP_ADMIN_PASSWORD", "chosen-Pass-123")
    call_command("ensure_admin", stdout=StringIO())
    assert User.objects.get(username="admin").check_password("chosen-Pass-123")


def test_admin_cancels_runs_through_the_services(admin_client: Client, workflows: None) -> None:
    from asgiref.sync import async_to_sync

    from wfapp.models import Event, Session
    from wfapp.runs import starting

    session_id, _ = async_to_sync(starting.create_run)("approval", {"n": 1})
    assert admin_client.get(f"/admin/wfapp/session/{session_id}/change/").status_code == 200
    response = admin_client.post(
        "/admin/wfapp/session/", {"action": "cancel_runs", "_selected_action": [session_id]}, follow=True
    )
    assert response.status_code == 200 and b"cancelled" in response.content
    assert Session.objects.get(pk=session_id).status == "cancelled"
    assert Event.objects.filter(session_id=session_id, kind="status").get().author == "admin"
