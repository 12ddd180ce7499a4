"""The two settings profiles: embedded defaults, and a production profile that passes check --deploy."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.db import connection

from wfapp.settings.environment import channel_layers, database
from wfapp.settings.secret_key import load_or_create

ROOT = Path(__file__).resolve().parents[2]


def _manage(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v
        for k, v in os.environ.items()
        if k not in {"SECRET_KEY", "ALLOWED_HOSTS", "DJANGO_SETTINGS_MODULE"}
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=180,  # Django's start-up on a loaded machine
    )


def test_production_profile_passes_check_deploy(tmp_path: Path) -> None:
    production = {
        "DJANGO_SETTINGS_MODULE": "wfapp.settings.production",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "ALLOWED_HOSTS": "wf.example.com",
        "WFAPP_DATA_DIR": str(tmp_path),
    }
    assert _manage("collectstatic", "--noinput", **production).returncode == 0  # as the README says
    done = _manage("check", "--deploy", "--fail-level", "WARNING", **production)
    assert done.returncode == 0, done.stderr
    assert "no issues" in done.stdout


def test_production_profile_needs_its_secrets_from_the_environment() -> None:
    done = _manage(
        "check", DJANGO_SETTINGS_MODULE="wfapp.settings.production", ALLOWED_HOSTS="wf.example.com"
    )
    assert done.returncode != 0 and "needs the environment variable SECRET_KEY" in done.stderr


def test_embedded_profile_defaults() -> None:
    assert settings.ALLOWED_HOSTS[:2] == ["127.0.0.1", "localhost"]
    assert "whitenoise.middleware.WhiteNoiseMiddleware" in settings.MIDDLEWARE
    assert "wfapp.web.session_expiry.LoginRequiredMiddleware" in settings.MIDDLEWARE  # Django's, htmx-aware
    assert settings.SECRET_KEY and len(settings.SECRET_KEY) >= 50


def test_secret_key_is_generated_once_and_kept(tmp_path: Path) -> None:
    path = tmp_path / "secret_key"
    key = load_or_create(path)
    assert load_or_create(path) == key and len(key) >= 50
    assert path.stat().st_mode & 0o777 == 0o600


def test_database_and_channel_layer_come_from_urls(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("REDIS_URL", raising=False)
    sqlite = database(tmp_path / "db.sqlite3")
    assert sqlite["OPTIONS"]["transaction_mode"] == "IMMEDIATE" and sqlite["OPTIONS"]["timeout"] > 0
    assert "synchronous=NORMAL" in sqlite["OPTIONS"]["init_command"]
    assert sqlite["TEST"]["NAME"].endswith(
        f"-{os.getpid()}.sqlite3"
    )  # a file: locking between connections is real
    assert channel_layers()["default"]["BACKEND"] == "wfapp.web.live.layer.InMemoryLayer"
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db.internal:5433/wf")
    monkeypatch.setenv("REDIS_URL", "redis://cache:6379/1")
    pg = database(tmp_path / "unused")
    assert (pg["ENGINE"], pg["HOST"], pg["PORT"], pg["NAME"]) == (
        "django.db.backends.postgresql",
        "db.internal",
        5433,
        "wf",
    )
    layer = channel_layers()["default"]
    assert layer["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    (host,) = layer["CONFIG"]["hosts"]
    assert host["address"] == "redis://cache:6379/1"
    # A read outlasts the layer's blocking receive (an idle socket must not time out).
    assert host["socket_timeout"] > RedisChannelLayer.brpop_timeout
    # The process's sockets share one Redis key: it holds far more than one socket's queue.
    built = RedisChannelLayer(**layer["CONFIG"])
    assert built.get_capacity("specific.abc!def") >= 100 * built.get_capacity("wfapp.inbox")


def test_sqlite_connection_runs_in_wal_mode(transactional_db: None) -> None:
    if connection.vendor != "sqlite":
        assert connection.vendor == "postgresql"
        return
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA journal_mode")
        assert cursor.fetchone()[0] == "wal"
        cursor.execute("PRAGMA synchronous")
        assert cursor.fetchone()[0] == 1  # NORMAL
    assert (
        connection.settings_dict["NAME"] != ":memory:"
        and "mode=memory" not in connection.settings_dict["NAME"]
    )
