"""Read settings from the environment: database and channel-layer URLs, flags, lists."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from wfapp.settings.data_dir import private_sqlite

RUNTIME_MODES = ("embedded", "workers")
REDIS_TIMEOUT = 5  # seconds a Redis command may take beyond the time it blocks for

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


def env_secrets(name: str) -> dict[str, str]:
    """Return a JSON object of strings (address -> secret) from the environment; ``{}`` when unset."""
    value = os.environ.get(name, "").strip()
    if not value:
        return {}
    try:
        parsed = json.loads(value)
    except ValueError as bad:
        raise ImproperlyConfigured(f"{name} is not JSON: {bad}") from None
    if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
        raise ImproperlyConfigured(f'{name} must be a JSON object of strings, e.g. {{"https://…": "secret"}}')
    return parsed


# PostgreSQL connections one process holds at most (WFAPP_DB_POOL_SIZE; 0 turns the pool off).
# The threads that live as long as the process keep one each (WFAPP_STORE_THREADS store threads,
# 4 by default, and asgiref's shared thread), so 10 left requests and live renders four at a time:
# under load requests waited for one until they failed. 20 leaves them fifteen.
DEFAULT_POOL_SIZE = 20


def pool_options() -> dict[str, Any] | None:
    """psycopg's pool for PostgreSQL, bounded by ``WFAPP_DB_POOL_SIZE``; None when it is 0.

    Daphne serves each request in a thread of its own: without a pool every such thread opened
    (and, with persistent connections, kept) a connection of its own. With the pool a request's
    connection goes back when the request ends, a consumer's after each read, and the threads
    that live as long as the process (the store's, asgiref's for the runtime) keep one each.
    A request that finds every connection in use waits up to ``timeout`` seconds for one.
    One connection of the budget is not the pool's: the runtime's group commit writes on an
    asyncio connection of its own (``wfapp.store.group``), so the pool holds one fewer (with a
    budget of 1, the process holds 2).
    """
    size = int(os.environ.get("WFAPP_DB_POOL_SIZE", str(DEFAULT_POOL_SIZE)))
    if size < 0:
        raise ValueError(f"WFAPP_DB_POOL_SIZE must be 0 (no pool) or more, not {size}")
    if size == 0:
        return None
    pooled = max(1, size - 1)
    return {"min_size": min(2, pooled), "max_size": pooled, "timeout": 30.0}


def lease_seconds() -> float:
    """How long a worker holds a run's lease without renewing it (``WFAPP_LEASE_SECONDS``)."""
    return float(os.environ.get("WFAPP_LEASE_SECONDS", "30"))


def postgres_options() -> dict[str, Any]:
    """The pool, and a server-side limit on a transaction left open: a worker frozen (SIGSTOP, a
    stalled VM) inside a transaction would hold its row locks forever, and whoever takes its runs
    over once the lease expired would wait on them. PostgreSQL ends such a session after twice the
    lease (``WFAPP_LEASE_SECONDS``); the frozen worker, should it wake, finds its connection gone."""
    limit_ms = round(2 * lease_seconds() * 1000)
    options: dict[str, Any] = {"options": f"-c idle_in_transaction_session_timeout={limit_ms}"}
    pool = pool_options()
    if pool is not None:
        options["pool"] = pool
    return options


def database(default_sqlite: Path) -> dict[str, Any]:
    """The default database: ``DATABASE_URL`` when set, else SQLite at ``default_sqlite``."""
    url = os.environ.get("DATABASE_URL", "")
    if url:
        # CONN_MAX_AGE 0: connections go back to the pool (or close) when a request ends.
        config: dict[str, Any] = dict(dj_database_url.parse(url, conn_max_age=0, conn_health_checks=True))
        if config["ENGINE"] == "django.db.backends.postgresql":
            config["OPTIONS"] = {**config.get("OPTIONS", {}), **postgres_options()}
        # One test database per test process, as for SQLite below.
        config["TEST"] = {"NAME": f"test_{config.get('NAME') or 'wfapp'}_{os.getpid()}"}
    else:
        private_sqlite(default_sqlite)
        config = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(default_sqlite)}
    if config["ENGINE"] == "django.db.backends.sqlite3":
        config["CONN_MAX_AGE"] = 0
        config["OPTIONS"] = {**SQLITE_OPTIONS, **config.get("OPTIONS", {})}
        # Tests run on a file, never in memory, so that locking between connections is real;
        # one file per test process, so that concurrent test runs do not clobber each other.
        config["TEST"] = {"NAME": str(Path(tempfile.gettempdir()) / f"wfapp-test-{os.getpid()}.sqlite3")}
    return config


PROCESS_CHANNEL_CAPACITY = 10_000  # messages a process's sockets may have waiting in Redis


def channel_layers() -> dict[str, Any]:
    """Redis (channels-redis) when ``REDIS_URL`` is set, else the in-memory layer."""
    url = os.environ.get("REDIS_URL", "")
    if url:
        from channels_redis.core import RedisChannelLayer

        # A socket's receive blocks in BZPOPMIN for ``brpop_timeout`` (5) seconds; redis-py 8 stops
        # reading after 5 seconds by default, so a socket idle that long died ("Timeout reading
        # from ...") and heard nothing more. A read may take the block plus a margin.
        host = {
            "address": url,
            "socket_timeout": RedisChannelLayer.brpop_timeout + REDIS_TIMEOUT,
            "socket_connect_timeout": REDIS_TIMEOUT,
            # Every socket of this process joins and leaves its groups through this pool, and many
            # leave at once (a deploy, a network blip): redis-py's default of 100 connections
            # failed them with "Too many connections". Redis itself takes 10,000 clients.
            "max_connections": int(os.environ.get("WFAPP_REDIS_MAX_CONNECTIONS", "1000")),
        }
        return {
            "default": {
                "BACKEND": "channels_redis.core.RedisChannelLayer",
                "CONFIG": {
                    "hosts": [host],
                    "prefix": os.environ.get("WFAPP_REDIS_PREFIX", "wfapp"),
                    # channels-redis keeps every socket of a process in one Redis key (the
                    # process's own channel) until the process reads them, and bounds that key
                    # by the capacity meant for one socket (100): a doorbell to 200 open pages is
                    # one entry there, but 200 pages' own checks and a second of backlog filled
                    # it, and doorbells to every page of the process were dropped at once.
                    "channel_capacity": {"specific.*": PROCESS_CHANNEL_CAPACITY},
                },
            }
        }
    return {"default": {"BACKEND": "wfapp.web.live.layer.InMemoryLayer"}}


def runtime_mode() -> str:
    """``WFAPP_RUNTIME``: ``embedded`` (the default) or ``workers``."""
    mode = os.environ.get("WFAPP_RUNTIME", "").strip().lower() or "embedded"
    if mode not in RUNTIME_MODES:
        raise ImproperlyConfigured(f"WFAPP_RUNTIME={mode!r}: expected one of {', '.join(RUNTIME_MODES)}")
    return mode
