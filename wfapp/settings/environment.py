"""Read settings from the environment: database and channel-layer URLs, flags, lists."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

RUNTIME_MODES = ("embedded", "workers")

SQLITE_OPTIONS = {
    # IMMEDIATE takes the write lock at BEGIN, so two writers queue on the busy timeout
    # instead of failing with "database is locked" when a reader upgrades to a writer.
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
    # WAL lets readers proceed while one process writes; NORMAL is durable in WAL mode
    # across application crashes (only an OS crash can lose the last commits), OFF is not.
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
}


def env_bool(name: str, default: bool = False) -> bool:
    """Return an environment flag: 1/true/yes/on are true."""
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: list[str] | None = None) -> list[str]:
    """Return a comma-separated environment variable as a list of stripped items."""
    value = os.environ.get(name, "")
    items = [item.strip() for item in value.split(",") if item.strip()]
    return items or list(default or [])


def database(default_sqlite: Path) -> dict[str, Any]:
    """The default database: ``DATABASE_URL`` when set, else SQLite at ``default_sqlite``."""
    url = os.environ.get("DATABASE_URL", "")
    if url:
        config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=60, conn_health_checks=True))
        # One test database per test process, as for SQLite below.
        config["TEST"] = {"NAME": f"test_{config.get('NAME') or 'wfapp'}_{os.getpid()}"}
    else:
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(default_sqlite)}
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
        # Tests run on a file, never in memory, so that locking between connections is real;
        # one file per test process, so that concurrent test runs do not clobber each other.
        config["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"wfapp-test-{os.getpid()}.sqlite3")}
    return config


def channel_layers() -> dict[str, Any]:
    """Redis (channels-redis) when ``REDIS_URL`` is set, else the in-memory layer."""
    url = os.environ.get("REDIS_URL", "")
    if url:
        return {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {"hosts": [url], "prefix": os.environ.get("WFAPP_REDIS_PREFIX", "wfapp")},
            }
        }
    return {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}


def runtime_mode() -> str:
    """``WFAPP_RUNTIME``: ``embedded`` (the default) or ``workers``."""
    mode = os.environ.get("WFAPP_RUNTIME", "").strip().lower() or "embedded"
    if mode not in RUNTIME_MODES:
        raise ImproperlyConfigured(f"WFAPP_RUNTIME={mode!r}: expected one of {', '.join(RUNTIME_MODES)}")
    return mode
