"""A worker frozen inside a transaction (SIGSTOP, a stalled VM) does not hold its locks forever:
PostgreSQL ends a session left idle in a transaction for twice the lease, so whoever takes its
runs over gets the rows it had locked (tests/scaled/test_worker_death.py freezes a real worker)."""

from __future__ import annotations

import time
from pathlib import Path

import psycopg
import pytest

from tests.scaled.conftest import ADMIN_URL
from wfapp.settings.environment import database

LOCK = 7_340_021  # an advisory lock standing for a run's row


def test_a_transaction_left_open_past_twice_the_lease_is_ended_and_its_lock_freed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("DATABASE_URL", ADMIN_URL)
    monkeypatch.setenv("WFAPP_LEASE_SECONDS", "0.5")
    options = database(tmp_path / "unused")["OPTIONS"]["options"]
    with psycopg.connect(ADMIN_URL, options=options) as frozen, psycopg.connect(ADMIN_URL) as other:
        frozen.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))  # the transaction stays open
        other.execute("SET lock_timeout = '20s'")
        started = time.monotonic()
        other.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))  # waits until the server ends `frozen`
        waited = time.monotonic() - started
        other.rollback()
        assert waited >= 0.5, f"the lock was free after {waited:.2f} s: nothing held it"
        with pytest.raises(psycopg.errors.IdleInTransactionSessionTimeout):  # woken: its session was ended
            frozen.execute("SELECT 1")
