"""Personal API tokens: created and revoked on the dashboard page, in the admin, and by the CLI."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.wfapp.helpers import subprocess_env
from wfapp.api import tokens
from wfapp.models import ApiToken

ROOT = Path(__file__).resolve().parents[2]
TOKEN = re.compile(r"wfa_[A-Za-z0-9_-]{43}")


def _works(token: str) -> int:
    return Client().get("/api/v1/workflows", headers={"Authorization": f"Bearer {token}"}).status_code


def test_the_page_creates_a_token_shown_once_and_revokes_it(alice: User, bob: User) -> None:
    client = Client()
    client.force_login(alice)
    empty = client.get("/api/tokens/")
    assert empty.status_code == 200 and b"No tokens yet" in empty.content
    created = client.post("/api/tokens/", {"name": "ticketing system"})
    token = TOKEN.search(created.content.decode())
    assert created.status_code == 200 and token is not None
    text = token.group(0)
    record = ApiToken.objects.get(user=alice)
    assert record.name == "ticketing system" and record.digest == tokens.digest(text)
    assert text not in client.get("/api/tokens/").content.decode()  # shown only that once
    assert _works(text) == 200
    record.refresh_from_db()
    assert record.last_used_at is not None

    other = Client()
    other.force_login(bob)
    assert other.post(f"/api/tokens/{record.pk}/revoke/").status_code == 404  # not bob's
    assert client.post(f"/api/tokens/{record.pk}/revoke/").status_code == 302
    assert _works(text) == 401
    assert b"revoked" in client.get("/api/tokens/").content
    refused = client.post("/api/tokens/", {"name": "  "})
    assert refused.status_code == 422 and b"needs a name" in refused.content
    assert ApiToken.objects.count() == 1


def test_the_page_needs_a_login(transactional_db: None) -> None:
    response = Client().get("/api/tokens/")
    assert response.status_code == 302 and "/login/" in response["Location"]


def test_the_admin_creates_and_revokes_tokens(transactional_db: None, alice: User) -> None:
    admin = User.objects.create_superuser("root", password="pw-root")
    client = Client()
    client.force_login(admin)
    added = client.post(
        "/admin/wfapp/apitoken/add/", {"user": alice.pk, "name": "from the admin"}, follow=True
    )
    token = TOKEN.search(added.content.decode())
    assert token is not None and _works(token.group(0)) == 200
    record = ApiToken.objects.get(name="from the admin")
    assert record.user == alice and token.group(0) not in (record.digest, record.prefix)
    client.post(
        "/admin/wfapp/apitoken/",
        {"action": "revoke_tokens", "_selected_action": [record.pk]},
    )
    assert _works(token.group(0)) == 401


@pytest.mark.django_db(transaction=True)
def test_manage_py_wf_token_create_prints_the_token_once(alice: User) -> None:
    env = subprocess_env()
    done = subprocess.run(
        [sys.executable, "manage.py", "wf", "token", "create", "alice", "--name", "cli"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    text = done.stdout.strip()
    assert TOKEN.fullmatch(text) and "shown only this once" in done.stderr
    assert _works(text) == 200
    record = ApiToken.objects.get(user=alice)
    revoked = subprocess.run(
        [sys.executable, "manage.py", "wf", "token", "revoke", "alice", str(record.pk)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert revoked.returncode == 0 and _works(text) == 401
    unknown = subprocess.run(
        [sys.executable, "manage.py", "wf", "token", "create", "nobody"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert unknown.returncode != 0 and "Unknown user 'nobody'" in unknown.stderr
    assert ApiToken.objects.count() == 1
