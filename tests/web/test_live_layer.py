"""The embedded profile's in-memory channel layer: channels' own, lighter per message, same contract."""

from __future__ import annotations

import asyncio

import pytest
from channels.exceptions import ChannelFull

from wfapp.web.live import layer as live_layer
from wfapp.web.live.layer import InMemoryLayer


async def test_messages_arrive_in_order_once_and_a_full_queue_refuses() -> None:
    layer = InMemoryLayer(capacity=3)
    channel = await layer.new_channel()
    for n in range(3):
        await layer.send(channel, {"type": "t", "n": n})
    with pytest.raises(ChannelFull):
        await layer.send(channel, {"type": "t", "n": 3})
    assert [(await layer.receive(channel))["n"] for _ in range(3)] == [0, 1, 2]
    assert channel not in layer.channels  # an emptied queue is dropped, as channels' layer does


async def test_group_sends_reach_members_and_a_receiver_waiting_before_the_send() -> None:
    layer = InMemoryLayer()
    first, second = await layer.new_channel(), await layer.new_channel()
    await layer.group_add("g", first)
    await layer.group_add("g", second)
    waiting = asyncio.create_task(layer.receive(first))
    await asyncio.sleep(0)
    await layer.group_send("g", {"type": "t", "n": 1})
    assert (await asyncio.wait_for(waiting, 5))["n"] == 1
    assert (await layer.receive(second))["n"] == 1


async def test_expired_messages_still_expire_and_take_their_channel_out_of_its_groups(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live_layer, "CLEAN_EVERY", 0.0)  # walk on every receive and group send
    layer = InMemoryLayer(expiry=0)
    channel = await layer.new_channel()
    await layer.group_add("g", channel)
    await layer.send(channel, {"type": "t"})
    await asyncio.sleep(0.01)
    await layer.group_send("g", {"type": "t"})  # walks: the expired message goes, and the member
    assert channel not in layer.groups.get("g", {})
