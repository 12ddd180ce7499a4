"""Doorbells reach live pages once per change, in every mode: a process's own commits are not
rung again by the change watcher (which is there for other processes' commits)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from tests.web.conftest import BIG_EXPENSE
from tests.web.test_consumers import QUIET, olga, socket
from tests.wfapp.helpers import settled
from wfapp.models import Interrupt
from wfapp.runs import answering, runtime, starting
from wfapp.runs.runtime import Runtime
from wfapp.store.doorbell import INBOX_GROUP

__all__ = ["olga"]  # the fixture


@pytest.fixture
async def watching(transactional_db: None) -> AsyncIterator[Runtime]:
    """The serving process's runtime with its change watch on (the in-memory layer's profile)."""
    serving = Runtime(watch=True)
    runtime.install(serving)
    await serving.start()
    yield serving
    await serving.stop()
    runtime.install(None)


async def _frames(comm: WebsocketCommunicator) -> list[str]:
    """The frames the socket sends until it goes quiet."""
    out = []
    while not await comm.receive_nothing(timeout=QUIET):
        out.append(await comm.receive_from())
    return out


async def _rings(layer: Any, channel: str) -> dict[str, tuple[str, int]]:
    """The doorbells that reached ``channel`` until it goes quiet: each ring's run and seq."""
    out = {}
    while True:
        try:
            async with asyncio.timeout(QUIET):
                message = await layer.receive(channel)
        except TimeoutError:
            return out
        out[message["ring"]] = (message["session_id"], message["seq"])


async def test_each_change_rings_once_and_reaches_an_open_inbox_once(olga: User, watching: Runtime) -> None:
    layer = get_channel_layer()
    inbox = await layer.new_channel()
    await layer.group_add(INBOX_GROUP, inbox)
    run = await starting.start_run("expense_approval", BIG_EXPENSE)  # not olga's: she approves it
    await settled(run, "waiting")
    comm = await socket("/ws/inbox/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello"}))
    manager = await Interrupt.objects.aget(session_id=run, interrupt_id="manager-approval")
    assert f'id="interrupt-{manager.pk}"' in await comm.receive_from(timeout=10)  # new to the page
    await _frames(comm)
    await _rings(layer, inbox)

    await answering.answer_interrupt(run, "manager-approval", {"approved": True}, user=olga)
    await settled(run)
    await watching.ring_changes()  # the watch has looked since the run settled
    frames = await _frames(comm)
    to_inbox = await _rings(layer, inbox)
    answered = (await Interrupt.objects.aget(pk=manager.pk)).answer_seq
    # The answer's commit, once: the turn after it asks nothing new (finance was asked already).
    assert list(to_inbox.values()) == [(run, answered)]
    assert len(frames) == 1 and f'id="interrupt-{manager.pk}"' in frames[0] and "answered" in frames[0]
    await comm.disconnect()
