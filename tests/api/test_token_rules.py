"""Who may create an API token for whom, where a new one is shown, the audit, and a token's
limits: expiry, revocation with its user's credentials, read-only, named workflows."""

from __future__ import annotations

import re
from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.admin.models import LogEntry
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from tests.api.conftest import Api
from wfapp.api import tokens
from wfapp.models import ApiToken, Session

TOKEN = re.compile(r"wfa_[A-Za-z0-9_-]{43}")
ADD = "/admin/wfapp/apitoken/add/"


def _works(token: str) -> int:
    return Client().get("/api/v1/workflows", headers={"Authorization": f"Bearer {token}"}).status_code


def _staff_with_token_rights() -> User:
    clerk = User.objects.create_user("clerk", password="pw-clerk", is_staff=True)
    clerk.user_permissions.add(
        *Permission.objects.filter(
            codename__in=["add_apitoken", "view_apitoken"], content_type__app_label="wfapp"
        )
    )
    return clerk


def _admin(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_staff_user_cannot_mint_a_token_for_a_superuser_or_anyone_else(
    transactional_db: None, alice: User
) -> None:
    root = User.objects.create_superuser("root", password="pw-root")
    clerk = _staff_with_token_rights()
    client = _admin(clerk)
    for victim in (root, alice):
        refused = client.post(ADD, {"user": victim.pk, "name": "takeover", "days": "90"})
        assert refused.status_code == 200 and TOKEN.search(refused.content.decode()) is None
        assert b"Select a valid choice" in refused.content  # only themselves may be picked
    assert not ApiToken.objects.exists()

    own = client.post(ADD, {"user": clerk.pk, "name": "mine", "days": "90"})
    assert own.status_code == 200 and own.headers["Cache-Control"].startswith("max-age=0")
    assert "no-store" in own.headers["Cache-Control"] and "messages" not in own.cookies
    token = TOKEN.search(own.content.decode())
    assert token is not None and _works(token.group(0)) == 200
    ApiToken.objects.create(user=root, name="root's own", prefix="wfa_xx", digest="0" * 64)
    listed = client.get("/admin/wfapp/apitoken/").content.decode()
    assert "mine" in listed and "root&#x27;s own" not in listed and "root's own" not in listed


def test_the_rights_rule_refuses_a_token_for_someone_who_outranks_the_creator(
    transactional_db: None, alice: User, mallory: User
) -> None:
    assert tokens.refusal(mallory, alice) == "Only a superuser may create a token for someone else."
    assert tokens.outranks(alice, mallory)  # alice holds permissions mallory lacks
    root = User.objects.create_superuser("root", password="pw-root")
    assert tokens.refusal(root, alice) is None and tokens.refusal(alice, alice) is None


def test_a_superuser_creates_one_for_someone_else_shown_once_and_audited(
    transactional_db: None, alice: User
) -> None:
    root = User.objects.create_superuser("root", password="pw-root")
    client = _admin(root)
    page = client.post(ADD, {"user": alice.pk, "name": "ticketing", "days": "", "read_only": "on"})
    assert page.status_code == 200 and "no-store" in page.headers["Cache-Control"]
    text = TOKEN.search(page.content.decode())
    assert text is not None and "messages" not in page.cookies
    record = ApiToken.objects.get(user=alice)
    assert record.read_only and record.expires_at is None
    assert text.group(0) not in client.get(f"/admin/wfapp/apitoken/{record.pk}/change/").content.decode()

    client.post("/admin/wfapp/apitoken/", {"action": "revoke_tokens", "_selected_action": [record.pk]})
    assert _works(text.group(0)) == 401
    history = client.get(f"/admin/wfapp/apitoken/{record.pk}/history/").content.decode()
    assert f"Created token {record.prefix}… for alice (read-only; never expires)." in history
    assert "Revoked (revoked by root)." in history
    assert list(LogEntry.objects.values_list("user__username", flat=True)) == ["root", "root"]


def test_the_page_shows_a_new_token_on_its_own_page_with_its_expiry_and_audits_it(alice: User) -> None:
    client = _admin(alice)
    created = client.post("/api/tokens/", {"name": "nightly", "days": "90"})
    assert created.status_code == 200 and b"Your new token: nightly" in created.content
    assert "no-store" in created.headers["Cache-Control"] and "messages" not in created.cookies
    record = ApiToken.objects.get(user=alice)
    assert record.expires_at is not None
    assert abs(record.expires_at - (timezone.now() + timedelta(days=90))) < timedelta(minutes=1)
    never = client.post("/api/tokens/", {"name": "forever", "days": "never"})
    assert never.status_code == 200 and ApiToken.objects.get(name="forever").expires_at is None
    bad = client.post("/api/tokens/", {"name": "odd", "days": "9999999"})
    assert bad.status_code == 422 and b"from 1 to 3650 days" in bad.content
    assert ApiToken.objects.count() == 2
    messages = list(LogEntry.objects.order_by("pk").values_list("change_message", flat=True))
    assert messages[0].startswith("Created token") and "expires" in messages[0]
    assert messages[1].endswith("(never expires).")


def test_an_expired_token_is_refused(alice: User) -> None:
    record, text = tokens.issue(alice, "short", days=1)
    assert _works(text) == 200
    ApiToken.objects.filter(pk=record.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    refused = Client().get("/api/v1/workflows", headers={"Authorization": f"Bearer {text}"})
    assert refused.status_code == 401 and "expired" in refused.json()["detail"]
    assert b"expired" in _admin(alice).get("/api/tokens/").content


def test_a_password_change_or_a_deactivation_revokes_the_users_tokens(
    transactional_db: None, alice: User
) -> None:
    root = User.objects.create_superuser("root", password="pw-root")
    admin = _admin(root)
    _, first = tokens.issue(alice, "first")
    changed = admin.post(
        f"/admin/auth/user/{alice.pk}/password/",
        {"password1": "a-new-Secret-77", "password2": "a-new-Secret-77", "usable_password": "true"},
    )
    assert changed.status_code == 302 and _works(first) == 401
    assert ApiToken.objects.get().revoked_because == "the user's password changed"

    _, second = tokens.issue(alice, "second")
    assert Client().post("/login/", {"username": "alice", "password": "a-new-Secret-77"}).status_code == 302
    assert _works(second) == 200  # logging in (last_login saved) revokes nothing
    alice.refresh_from_db()
    alice.is_active = False
    alice.save(update_fields=["is_active"])
    assert _works(second) == 401
    assert ApiToken.objects.get(name="second").revoked_because == "the user was deactivated"
    assert (
        "Revoked (the user was deactivated)."
        in admin.get(
            f"/admin/wfapp/apitoken/{ApiToken.objects.get(name='second').pk}/history/"
        ).content.decode()
    )


def test_a_password_hash_upgrade_at_login_revokes_nothing(
    transactional_db: None, alice: User, settings: Any
) -> None:
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    User.objects.filter(pk=alice.pk).update(password=make_password("pw-alice", hasher="md5"))
    _, text = tokens.issue(alice, "kept")
    assert Client().post("/login/", {"username": "alice", "password": "pw-alice"}).status_code == 302
    assert User.objects.get(pk=alice.pk).password.startswith("pbkdf2_")  # rehashed
    assert _works(text) == 200


async def test_a_read_only_token_reads_and_changes_nothing(waiting_run: Any, alice: User) -> None:
    run = await waiting_run()
    _, text = await sync_to_async(tokens.issue)(alice, "reader", read_only=True)
    reader = Api(text)
    assert (await reader.get(f"runs/{run['id']}")).status_code == 200
    before = await Session.objects.acount()
    refused = await reader.post("workflows/expense_approval/runs", {"input": {"employee": "x"}})
    assert refused.status_code == 403 and refused.json()["type"] == "/api/v1/problems/token-scope"
    cancel = await reader.post(f"runs/{run['id']}/cancel")
    assert cancel.status_code == 403 and await Session.objects.acount() == before
    assert (await Session.objects.aget(pk=run["id"])).status == "waiting"


async def test_a_token_limited_to_a_workflow_reaches_no_other(waiting_run: Any, alice: User) -> None:
    run = await waiting_run()  # an expense_approval run, waiting for a question
    _, other = await sync_to_async(tokens.issue)(alice, "docs only", workflows=["document_review"])
    _, same = await sync_to_async(tokens.issue)(alice, "expenses only", workflows=["expense_approval"])
    docs, expenses = Api(other), Api(same)
    assert [w["name"] for w in (await docs.get("workflows")).json()["items"]] == ["document_review"]
    assert (await docs.get("workflows/expense_approval")).status_code == 404
    assert (await docs.get(f"runs/{run['id']}")).status_code == 404
    assert (await docs.get("runs")).json()["items"] == []
    assert (await docs.get("interrupts")).json()["count"] == 0
    started = await docs.post("workflows/expense_approval/runs", {"input": {"employee": "x"}})
    assert started.status_code == 403 and started.json()["type"] == "/api/v1/problems/token-scope"
    assert (await expenses.get(f"runs/{run['id']}")).status_code == 200
    _, everything = await sync_to_async(tokens.issue)(alice, "all")
    pending = (await Api(everything).get("interrupts")).json()["count"]
    assert pending > 0 and (await expenses.get("interrupts")).json()["count"] == pending


def test_a_token_for_an_unknown_workflow_is_refused(alice: User) -> None:
    refused = _admin(alice).post("/api/tokens/", {"name": "x", "days": "90", "workflows": ["no_such_flow"]})
    assert refused.status_code == 422 and b"No such workflow: no_such_flow." in refused.content
    assert not ApiToken.objects.exists()


def test_the_command_line_creates_a_limited_token(alice: User) -> None:
    out, err = StringIO(), StringIO()
    call_command(
        "wf", "token", "create", "alice", "--name", "ci", "--days", "7", "--read-only",
        "--workflow", "document_review", stdout=out, stderr=err,
    )  # fmt: skip
    record = ApiToken.objects.get(user=alice)
    assert record.read_only and record.workflows == ["document_review"] and record.expires_at is not None
    assert "read-only; workflows document_review; expires" in err.getvalue()
    assert _works(out.getvalue().strip()) == 200
    with pytest.raises(CommandError, match="No such workflow: nope"):
        call_command("wf", "token", "create", "alice", "--workflow", "nope", stdout=out, stderr=err)
    assert ApiToken.objects.count() == 1
