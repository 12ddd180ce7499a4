"""No page goes deaf: a socket that lost doorbells (the layer dropped them, or removed it from
its groups) finds out and catches up from its position, through a real websocket."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from channels_redis.core import RedisChannelLayer
from django.contrib.auth.models import User

from tests.web.test_consumers import olga, socket, start
from wfapp.models import Interrupt
from wfapp.runs import answering
from wfapp.store import doorbell
from wfapp.store.doorbell import DOORBELL_TYPE, INBOX_GROUP, RUNS_GROUP
from wfapp.web.live import behind

__all__ = ["olga"]  # the fixture

GROUPS = (INBOX_GROUP, RUNS_GROUP)
LIST = 'id="inbox-list"'  # the whole list, as a reconnect gets it


@pytest.fixture(autouse=True)
def _checks_often(settings: Any) -> None:
    settings.WFAPP_LIVE_CHECK_SECONDS = 0.2


async def _card(run: str, interrupt_id: str) -> str:
    return f'id="interrupt-{(await Interrupt.objects.aget(session_id=run, interrupt_id=interrupt_id)).pk}"'


async def _inbox(user: User, run: str) -> WebsocketCommunicator:
    comm = await socket("/ws/inbox/", user)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello"}))
    assert await _card(run, "manager-approval") in await comm.receive_from(timeout=10)  # open questions
    return comm


async def _forget_every_member(layer: Any) -> None:
    """What the in-memory layer does to a socket whose oldest queued message expired, and either
    layer to a member after ``group_expiry``: it is in no group any more."""
    if isinstance(layer, RedisChannelLayer):
        for index in range(layer.ring_size):
            await layer.connection(index).delete(*(layer._group_key(g) for g in GROUPS))
        return
    for group in list(layer.groups):
        for channel in list(layer.groups[group]):
            await layer.group_discard(group, channel)


async def _members(layer: Any, group: str) -> list[str]:
    """The channels in ``group``, on either layer."""
    if isinstance(layer, RedisChannelLayer):
        key = layer._group_key(group)
        return [m.decode() for m in await layer.connection(layer.consistent_hash(group)).zrange(key, 0, -1)]
    return list(layer.groups.get(group, {}))


async def test_a_socket_the_layer_dropped_from_its_groups_hears_again_and_catches_up(olga: User) -> None:
    run = await start()
    comm = await _inbox(olga, run)
    await _forget_every_member(get_channel_layer())
    await answering.answer_interrupt(run, "manager-approval", {"approved": True}, user=olga, advance=False)
    # The socket's check puts it back in its groups, and catches it up if the answer's doorbell
    # went by meanwhile: the page shows the question closed, one way or the other.
    manager = await _card(run, "manager-approval")
    frame = await comm.receive_from(timeout=10)
    assert (LIST in frame and manager not in frame) or f'class="card inbox-item answered" {manager}' in frame
    await answering.answer_interrupt(run, "finance-approval", {"approved": True}, user=olga, advance=False)
    assert await _card(run, "finance-approval") in await comm.receive_from(timeout=10)  # it hears again
    await comm.disconnect()


async def test_a_socket_that_missed_doorbells_catches_up_from_its_position(olga: User) -> None:
    run = await start()
    comm = await _inbox(olga, run)
    heard = doorbell.rung_counts()[INBOX_GROUP]
    # A doorbell numbered past the last one this socket heard: the layer dropped those between.
    skipped = {INBOX_GROUP: heard + 5}
    bell = {
        "type": DOORBELL_TYPE,
        "session_id": run,
        "seq": 1,
        "ring": f"{doorbell.PROCESS}-x",
        "counts": skipped,
    }
    await get_channel_layer().group_send(INBOX_GROUP, bell)
    assert LIST in await comm.receive_from(timeout=10)
    await comm.disconnect()


async def test_a_burst_of_doorbells_longer_than_a_sockets_queue_neither_drops_nor_closes_it(
    olga: User,
) -> None:
    """Rings faster than a page renders fold into what it still has to do: its queue (100 messages
    in the in-memory layer) never fills, so none is dropped and the runs list, which reloads when
    it fell behind, stays open and shows what changed."""
    run = await start()
    comm = await socket("/ws/runs/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello"}))
    for seq in range(1, 301):
        await doorbell.ring(run, seq, runs=True, inbox=True)
        for _ in range(20):  # the loop turns a few times, as between commits, but no render ends
            await asyncio.sleep(0)
    newer = await start()
    frames = ""
    while newer not in frames:
        message = await comm.receive_output(timeout=20)
        assert message["type"] == "websocket.send", message  # not closed (a reload) meanwhile
        frames += message.get("text", "")
    await comm.disconnect()


async def test_a_check_sent_while_a_ring_is_on_its_way_does_not_take_the_socket_for_behind(
    olga: User,
) -> None:
    """The in-memory layer hands a group's message to each member in a task of its own (and Redis
    awaits the network): a socket's check sent meanwhile can reach its queue first. It must not
    count the ring still on its way as lost (that re-sends the whole list to every open inbox)."""
    run = await start()
    comm = await _inbox(olga, run)
    layer = get_channel_layer()
    ringing = asyncio.create_task(doorbell.ring(run, 1, inbox=True))
    await asyncio.sleep(0)  # the ring is on its way: its deliveries are tasks not yet run
    (channel,) = await _members(layer, INBOX_GROUP)
    await layer.send(channel, {"type": behind.CHECK_TYPE, "rung": doorbell.rung_counts()})
    await ringing
    frames = ""
    while not await comm.receive_nothing(timeout=1):
        frames += await comm.receive_from()
    assert LIST not in frames  # the run's cards again at most (who holds them), not the whole list
    await comm.disconnect()
