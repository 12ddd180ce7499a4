"""Listening for doorbells from an HTTP request: the same groups the websockets join.

A doorbell only says *that* something changed; listeners read what changed from the
database, and also look again every ``IDLE`` seconds, so a lost doorbell only delays them.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer

from wfapp import runtime
from wfapp.models import RunStatus, Session

IDLE = 15.0  # seconds between looks (and SSE keep-alive comments) when no doorbell rings
SETTLE_WAIT = 5.0  # how long an answer waits for the run to take it before answering 202


class Doorbells:
    """A private channel in some doorbell groups; ``wait`` returns when one rings."""

    def __init__(self, layer: Any, channel: str | None) -> None:
        self.layer = layer
        self.channel = channel

    async def wait(self, timeout: float = IDLE) -> dict[str, Any] | None:
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


def _settled(session_id: str, after_seq: int) -> bool:
    row = Session.objects.filter(pk=session_id).values("status", "settled_seq").first()
    return row is None or (row["status"] != RunStatus.RUNNING and row["settled_seq"] >= after_seq)


async def wait_settled(
    session_id: str, after_seq: int, bell: Doorbells, timeout: float = SETTLE_WAIT
) -> bool:
    """Whether the run ended its turn after seq ``after_seq`` within ``timeout`` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    check: Callable[[str, int], Awaitable[bool]] = sync_to_async(_settled)
    while not await check(session_id, after_seq):
        left = deadline - loop.time()
        if left <= 0:
            return False
        await bell.wait(min(left, 0.5))
    return True


def advances_here() -> bool:
    """Whether this process's runtime takes the answer up (else a worker does, later)."""
    return runtime.current().running
