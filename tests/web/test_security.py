"""The dashboard's security: per-action permissions on pages and actions, safe redirects."""

from __future__ import annotations

from io import StringIO

from django.contrib.auth.models import Permission, User
from django.db.models import F
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


# -- login throttling -----------------------------------------------------------------------------


def _log_in(client: Client, username: str, password: str, path: str = "/login/") -> int:
    response = client.post(path, {"username": username, "password": password, "next": "/"})
    return int(response.status_code)


def _logged_in(client: Client) -> bool:
    return client.get(reverse("inbox")).status_code == 200


def _lock_out(settings, path: str = "/login/") -> Client:
    settings.WFAPP_LOGIN_FAILURE_LIMIT = 3
    User.objects.create_user("olga", password="the right one")
    client = Client()
    statuses = [_log_in(client, "olga", f"wrong {n}", path) for n in range(3)]
    assert statuses == [200, 200, 429]  # the form says "wrong" twice; the third failure locks
    return client


def test_the_right_password_is_refused_while_locked_out(db: None, settings) -> None:
    client = _lock_out(settings)
    response = client.post("/login/", {"username": "olga", "password": "the right one"})
    assert response.status_code == 429
    assert "Too many failed logins" in response.content.decode()
    assert not _logged_in(client)
    User.objects.create_user("piet", password="pw-piet")
    assert _log_in(Client(), "piet", "pw-piet") == 302  # another user from the same address is not locked


def test_the_admin_login_is_throttled_too(db: None, settings) -> None:
    client = _lock_out(settings, path="/admin/login/")
    User.objects.filter(username="olga").update(is_staff=True)
    assert _log_in(client, "olga", "the right one", "/admin/login/") == 429
    assert _log_in(client, "olga", "the right one") == 429  # one lock for both login pages
    assert client.get("/admin/").status_code == 302  # still not logged in


def test_the_lock_lifts_after_the_cool_off(db: None, settings) -> None:
    from datetime import timedelta

    from axes.models import AccessAttempt

    settings.WFAPP_LOGIN_COOLOFF_MINUTES = 10
    client = _lock_out(settings)
    assert _log_in(client, "olga", "the right one") == 429
    # Time passes: the failures are now older than the cool-off.
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(minutes=11))
    assert _log_in(client, "olga", "the right one") == 302
    assert _logged_in(client)


def test_axes_reset_lifts_the_lock(db: None, settings) -> None:
    from django.core.management import call_command

    client = _lock_out(settings)
    call_command("axes_reset", stdout=StringIO())
    assert _log_in(client, "olga", "the right one") == 302 and _logged_in(client)


# -- an ended session ----------------------------------------------------------------------------


def test_an_htmx_request_after_the_session_ended_sends_the_page_to_login(start_run) -> None:
    row = pending(start_run())[0]
    anonymous = Client()
    page = f"http://testserver/runs/{row.session_id}/?expand=x"
    response = anonymous.post(
        reverse("answer", args=[row.pk]), {"f.approved": "true"}, HTTP_HX_CURRENT_URL=page, **HX
    )
    assert response.status_code == 401
    assert response["HX-Redirect"] == f"/login/?next=/runs/{row.session_id}/%3Fexpand%3Dx"
    assert "<form" not in response.content.decode()  # no login page to swap into the card
    row.refresh_from_db()
    assert row.status == "pending"
    elsewhere = anonymous.get(reverse("inbox"), HTTP_HX_CURRENT_URL="https://evil.example/x", **HX)
    assert (elsewhere.status_code, elsewhere["HX-Redirect"]) == (401, "/login/?next=/")


def test_a_plain_post_after_the_session_ended_comes_back_to_its_page(start_run) -> None:
    row = pending(start_run())[0]
    anonymous = Client()
    response = anonymous.post(
        reverse("answer", args=[row.pk]), {"f.approved": "true"}, HTTP_REFERER="http://testserver/?q=Ann"
    )
    assert (response.status_code, response["Location"]) == (302, "/login/?next=/%3Fq%3DAnn")
    page = anonymous.get(reverse("runs"))
    assert (page.status_code, page["Location"]) == (302, "/login/?next=/runs/")  # GETs as before


# -- content security policy ----------------------------------------------------------------------


def test_pages_send_a_strict_content_security_policy(operator_client: Client) -> None:
    for path in ("/login/", reverse("inbox"), reverse("workflows"), "/admin/login/"):
        policy = operator_client.get(path)["Content-Security-Policy"]
        directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
        assert directives["script-src"] == "'self'", path
        assert directives["style-src"] == "'self'" and directives["object-src"] == "'none'"
        assert "unsafe" not in policy


def test_the_production_profile_sends_the_same_policy_and_throttles_logins(tmp_path) -> None:
    import json
    import os
    import secrets
    import subprocess
    import sys
    from pathlib import Path

    from django.conf import settings

    script = (
        "import json; from django.conf import settings as s; print(json.dumps({'csp': s.SECURE_CSP, "
        "'middleware': s.MIDDLEWARE, 'backends': s.AUTHENTICATION_BACKENDS}))"
    )
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", script],
        cwd=Path(__file__).resolve().parents[2],
        env={
            **env,
            "DJANGO_SETTINGS_MODULE": "wfapp.settings.production",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "ALLOWED_HOSTS": "wf.example.com",
            "WFAPP_DATA_DIR": str(tmp_path),
        },
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    production = json.loads(done.stdout.strip().splitlines()[-1])  # after what the shell says itself
    assert production["csp"] == {k: [str(v) for v in vs] for k, vs in settings.SECURE_CSP.items()}
    assert "django.middleware.csp.ContentSecurityPolicyMiddleware" in production["middleware"]
    assert production["middleware"][-1] == "axes.middleware.AxesMiddleware"
    assert production["backends"][0] == "axes.backends.AxesStandaloneBackend"
