"""The runtime's store writes a node's events to SQLite inline; it never waits there, and
everything it cannot do inline takes the thread path with the same outcome."""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from engine.testing import stamp
from wfapp.errors import LeaseLostError
from wfapp.store import inline as store_inline
from wfapp.store import lease as leases
from wfapp.store.events import DjangoEventStore

pytestmark = pytest.mark.skipif(
    settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3", reason="SQLite's inline path"
)


def _node(session_id: str, seq: int, name: str) -> list:
    path = f"wf@1/{name}@1"
    return stamp(
        session_id,
        seq,
        [{"kind": "started", "node_path": path}, {"kind": "completed", "node_path": path, "output": seq}],
    )


def _db_path() -> str:
    return str(settings.DATABASES["default"]["NAME"])


async def test_an_append_waits_for_another_writer_and_then_commits(transactional_db: None) -> None:
    store = DjangoEventStore(own_thread=True)
    await store.create_session("s", "wf", None)
    other = sqlite3.connect(_db_path(), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")  # another process recording an answer, say
    asyncio.get_running_loop().call_later(0.3, other.execute, "COMMIT")
    assert await store.append("s", _node("s", 1, "a"), expected_seq=0) == 2
    other.close()
    assert [e.kind for e in await store.list_events("s")] == ["started", "completed"]
    assert (await store.get_session("s")).last_seq == 2


async def test_a_stale_lease_is_refused_inline_too(transactional_db: None) -> None:
    await DjangoEventStore().create_session("s", "wf", None)
    first = await sync_to_async(leases.claim)("s", "host:1:a", 30)
    assert first is not None
    await sync_to_async(leases.claim)("s", "host:2:b", 30, force=True)
    with pytest.raises(LeaseLostError):
        await DjangoEventStore(first, own_thread=True).append("s", _node("s", 1, "a"), expected_seq=0)
    assert await DjangoEventStore().list_events("s") == []


async def test_inline_commits_are_checkpointed_into_the_database_file(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(store_inline, "CHECKPOINT_EVERY", 4)
    store = DjangoEventStore(own_thread=True)
    await store.create_session("s", "wf", None)
    for i in range(8):
        await store.append("s", _node("s", 2 * i + 1, f"n{i}"), expected_seq=2 * i)

    def in_database_file() -> int:
        # immutable=1 reads the main file alone, as if the WAL were lost: what a checkpoint moved.
        conn = sqlite3.connect(f"file:{_db_path()}?immutable=1", uri=True)
        try:
            return conn.execute("SELECT count(*) FROM wfapp_event WHERE session_id = 's'").fetchone()[0]
        finally:
            conn.close()

    for _ in range(100):
        if in_database_file() >= 12:  # at least the first 6 batches, with the second checkpoint
            break
        await asyncio.sleep(0.05)
    assert in_database_file() >= 12
