"""Doorbells: after each commit the channel layer carries ``{session_id, seq}`` to the right groups.

Runs on the in-memory layer by default and on channels-redis when ``REDIS_URL`` is set.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import channel_layers, get_channel_layer
from channels_redis.core import RedisChannelLayer

from engine import Interrupt
from engine.testing import stamp
from wfapp.store.doorbell import DOORBELL_TYPE, INBOX_GROUP, RUNS_GROUP, session_group
from wfapp.store.events import DjangoEventStore


@pytest.fixture
async def layer() -> AsyncIterator[Any]:
    channel_layers.backends.clear()  # a layer bound to this test's event loop
    fresh = get_channel_layer()
    yield fresh
    if hasattr(fresh, "flush"):
        await fresh.flush()
    channel_layers.backends.clear()


async def _listen(layer: Any, group: str) -> str:
    channel = await layer.new_channel()
    await layer.group_add(group, channel)
    return channel


async def _next(layer: Any, channel: str) -> dict[str, Any]:
    async with asyncio.timeout(5):
        return dict(await layer.receive(channel))


async def test_doorbells_carry_only_the_session_and_seq(transactional_db: None, layer: Any) -> None:
    runs = await _listen(layer, RUNS_GROUP)
    inbox = await _listen(layer, INBOX_GROUP)
    store = DjangoEventStore()
    await store.create_session("bell", "wf", {"secret": "never sent"})
    created = await _next(layer, runs)
    assert _bell("bell", 0) == created | {"ring": None, "counts": None}

    run = await _listen(layer, session_group("bell"))
    ask = Interrupt(id="ok", node_path="wf@1/ask@1", message="confidential")
    await store.append(
        "bell",
        stamp("bell", 1, [{"kind": "interrupt", "node_path": ask.node_path, "interrupt": ask}]),
        expected_seq=0,
    )
    to_run, to_inbox = await _next(layer, run), await _next(layer, inbox)
    assert to_run == to_inbox  # one ring: the same id in every group it reaches
    assert _bell("bell", 1) == to_run | {"ring": None, "counts": None} and to_run["ring"] != created["ring"]

    await store.append("bell", stamp("bell", 2, [{"kind": "status", "status": "waiting"}]), expected_seq=1)
    assert _bell("bell", 2) == (await _next(layer, run)) | {"ring": None, "counts": None}
    # The runs list hears status changes; this append changed no interrupt, so the inbox heard nothing.
    assert _bell("bell", 2) == (await _next(layer, runs)) | {"ring": None, "counts": None}
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await layer.receive(inbox)


def _bell(session_id: str, seq: int) -> dict[str, Any]:
    # ``ring`` and ``counts`` number the rings; they say nothing of the run.
    return {"type": DOORBELL_TYPE, "session_id": session_id, "seq": seq, "ring": None, "counts": None}


def test_group_names_are_valid_for_any_session_id() -> None:
    assert session_group("abc123") == "wfapp.session.abc123"
    odd = session_group("a run/with spaces ✓" * 10)
    assert odd.startswith("wfapp.session.h") and len(odd) < 100
    assert odd.replace(".", "").replace("-", "").replace("_", "").isalnum()


async def test_the_server_rings_for_commits_made_by_other_processes(
    transactional_db: None, layer: Any
) -> None:
    from asgiref.sync import sync_to_async

    from wfapp.runs.runtime import Runtime

    serving = Runtime(watch=True)
    runs = await _listen(layer, RUNS_GROUP)
    # A CLI process writes without reaching this process's in-memory layer.
    other = DjangoEventStore()
    await sync_to_async(other.create_session_sync)("cli-run", "wf", None)
    await sync_to_async(other.append_sync)("cli-run", stamp("cli-run", 1, [{"kind": "started"}]), 0)
    await serving.ring_changes()
    assert _bell("cli-run", 1) == (await _next(layer, runs)) | {"ring": None, "counts": None}
    await serving.ring_changes()  # nothing new: no second ring
    with pytest.raises(TimeoutError):
        async with asyncio.timeout(0.3):
            await layer.receive(runs)


async def test_a_listener_idle_longer_than_the_layers_blocking_read_still_hears_the_next_doorbell(
    transactional_db: None, layer: Any
) -> None:
    # channels-redis blocks each receive for brpop_timeout seconds; a Redis read that gave up
    # as soon (redis-py's default) killed every page that heard nothing for that long.
    run = await _listen(layer, session_group("idle"))
    listening = asyncio.ensure_future(layer.receive(run))
    await asyncio.sleep(RedisChannelLayer.brpop_timeout + 1)
    assert not listening.done()  # still waiting, not failed
    store = DjangoEventStore()
    await store.create_session("idle", "wf", None)
    async with asyncio.timeout(5):
        assert _bell("idle", 0) == dict(await listening) | {"ring": None, "counts": None}


async def test_a_process_full_of_sockets_joins_and_leaves_its_groups_at_once(layer: Any) -> None:
    # 150 open pages closing together (a deploy, a network blip) each leave their groups at once;
    # on Redis the layer's connection pool must hold them (redis-py's default of 100 did not:
    # 450 joins at once). Not more: on a loaded machine a bigger storm of new connections times out.
    channels = [await layer.new_channel() for _ in range(150)]
    groups = [INBOX_GROUP, RUNS_GROUP, session_group("many")]
    await asyncio.gather(*(layer.group_add(group, c) for c in channels for group in groups))
    await layer.group_send(INBOX_GROUP, _bell("many", 1))
    heard = await asyncio.gather(*(_next(layer, c) for c in channels))
    assert all(message["session_id"] == "many" for message in heard)
    await asyncio.gather(*(layer.group_discard(group, c) for c in channels for group in groups))


async def test_rings_sent_at_once_reach_a_listener_in_their_numbers_order(
    layer: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A layer that awaits the network for each send (Redis) must not swap two rings: a socket
    hearing ring n+1 before ring n would take n for lost and reload its whole list."""
    from wfapp.store import doorbell

    channel = await _listen(layer, INBOX_GROUP)
    send = layer.group_send
    delays = iter([0.05, 0.0] * 10)  # the first ring's sends are slow, the second's fast

    async def slow_send(group: str, message: dict[str, Any]) -> None:
        await asyncio.sleep(next(delays) if group != INBOX_GROUP else 0.0)
        await send(group, message)

    monkeypatch.setattr(layer, "group_send", slow_send)
    await asyncio.gather(doorbell.ring("run-a", 1, inbox=True), doorbell.ring("run-b", 1, inbox=True))
    first, second = await _next(layer, channel), await _next(layer, channel)
    numbers = [first["counts"][INBOX_GROUP], second["counts"][INBOX_GROUP]]
    assert numbers == sorted(numbers) and numbers[1] == numbers[0] + 1
