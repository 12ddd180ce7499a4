"""Listening for doorbells from an HTTP request: the same groups the websockets join.

A doorbell only says *that* something changed; listeners read what changed from the
database, and also look again whenever a wait times out (the streams wait at most
``WFAPP_LIVE_RECHECK_SECONDS``, when they check their access too), so a lost doorbell only
delays them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

from channels.layers import get_channel_layer

from wfapp.runs.runtime import Turn

SETTLE_WAIT = 5.0  # how long an answer waits for this process's turn before answering 202


class Doorbells:
    """A private channel in some doorbell groups; ``wait`` returns when one rings."""

    def __init__(self, layer: Any, channel: str | None) -> None:
        self.layer = layer
        self.channel = channel

    async def wait(self, timeout: float) -> dict[str, Any] | None:
        """The next doorbell (``session_id``, ``seq``), or None when ``timeout`` passed first."""
        if self.layer is None or self.channel is None:
            await asyncio.sleep(min(timeout, 1.0))  # no channel layer: look again soon
            return None
        try:
            async with asyncio.timeout(timeout):
                message = await self.layer.receive(self.channel)
        except TimeoutError:
            return None
        return message if isinstance(message, dict) else {}


@contextlib.asynccontextmanager
async def doorbells(*groups: str) -> AsyncIterator[Doorbells]:
    """Join ``groups`` for the block (join first, then read: no ring falls in between)."""
    layer = get_channel_layer()
    if layer is None:
        yield Doorbells(None, None)
        return
    channel = await layer.new_channel("wfapp.api.")
    for group in groups:
        await layer.group_add(group, channel)
    try:
        yield Doorbells(layer, channel)
    finally:
        for group in groups:
            with contextlib.suppress(Exception):
                await layer.group_discard(group, channel)


async def turn_settled(turn: Turn | None, timeout: float | None = None) -> bool:
    """Whether this process's turn of the run (``Runtime.kick``) settled it within ``timeout``:
    the run took the answer up here. False when it advances elsewhere (``turn`` None: a worker's
    job, or the next sweep), was held by another worker, or is still going after ``timeout``
    (default ``SETTLE_WAIT``)."""
    if turn is None:
        return False
    try:
        async with asyncio.timeout(SETTLE_WAIT if timeout is None else timeout):
            result = await asyncio.shield(asyncio.wrap_future(turn))
    except TimeoutError:
        return False
    return result is not None
