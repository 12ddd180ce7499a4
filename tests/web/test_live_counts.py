"""The live pending count costs one COUNT per doorbell, however many pages are open."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import User

from tests.web.conftest import make_user
from tests.web.test_consumers import drain, socket, start
from wfapp.store.doorbell import DOORBELL_TYPE, INBOX_GROUP
from wfapp.web import counts, queries


@pytest.fixture(autouse=True)
def _fresh_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    counts.forget()
    # A shared count also expires after counts.TTL (2 s): pages that a loaded machine serves
    # slower than that would count again, and this counts per doorbell, not per 2 seconds.
    monkeypatch.setattr(counts, "TTL", 600.0)


@pytest.fixture
async def operators(transactional_db: None) -> list[User]:
    return [await sync_to_async(make_user)(f"op{i}", may_answer=True) for i in range(4)]


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    calls = {"pending": 0, "matching": 0}
    real_pending, real_matching = queries.pending_count, queries.pending_matching_count

    def pending(user: Any) -> int:
        calls["pending"] += 1
        return real_pending(user)

    def matching(user: Any, **filters: Any) -> int:
        calls["matching"] += 1
        return real_matching(user, **filters)

    monkeypatch.setattr(queries, "pending_count", pending)
    monkeypatch.setattr(queries, "pending_matching_count", matching)
    return calls


async def _open(paths_and_users: list[tuple[str, User]]) -> AsyncIterator[Any]:
    for path, user in paths_and_users:
        comm = await socket(path, user)
        assert (await comm.connect())[0]
        await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0, "rendered_at": "x"}))
        await drain(comm)
        yield comm


async def test_one_count_per_doorbell_for_many_open_pages(
    operators: list[User], counted: dict[str, int]
) -> None:
    run = await start()
    pages = [(f"/ws/runs/{run}/?after=0", operators[0]), ("/ws/runs/", operators[1])]
    pages += [("/ws/inbox/", user) for user in operators] + [("/ws/nav/", user) for user in operators]
    comms = [comm async for comm in _open(pages)]
    counted.update(pending=0, matching=0)

    await get_channel_layer().group_send(INBOX_GROUP, {"type": DOORBELL_TYPE, "session_id": run, "seq": 99})
    received = [await drain(comm, until='id="inbox-count"') for comm in comms]
    assert all('id="inbox-count" hx-swap-oob="true"' in html and ">2</span>" in html for html in received)
    assert counted == {"pending": 1, "matching": 0}

    # The next doorbell counts again: a cached count never outlives the commit it counted.
    await get_channel_layer().group_send(INBOX_GROUP, {"type": DOORBELL_TYPE, "session_id": run, "seq": 100})
    for comm in comms:
        await drain(comm)
    assert counted == {"pending": 2, "matching": 0}
    for comm in comms:
        await comm.disconnect()


async def test_filtered_inboxes_share_one_count_per_filter(
    operators: list[User], counted: dict[str, int]
) -> None:
    run = await start()
    pages = [("/ws/inbox/?workflow=expense_approval", user) for user in operators]
    pages += [("/ws/inbox/?q=nothing-matches", user) for user in operators]
    comms = [comm async for comm in _open(pages)]
    counted.update(pending=0, matching=0)
    await get_channel_layer().group_send(INBOX_GROUP, {"type": DOORBELL_TYPE, "session_id": run, "seq": 99})
    received = [await drain(comm, until="pending matching</p>") for comm in comms]
    assert all(">2 pending matching</p>" in html for html in received[:4])
    assert all(">0 pending matching</p>" in html for html in received[4:])
    assert counted == {"pending": 1, "matching": 2}
    for comm in comms:
        await comm.disconnect()
