"""Sockets that fall behind: found out and caught up, never left deaf.

Channel layers lose doorbells under overload, silently: a socket's queue holds ``capacity``
messages and a group send past that drops the message for that socket; the in-memory layer also
removes a socket from every group once a message waited ``expiry`` seconds in its queue, and both
layers forget a member after ``group_expiry``. Doorbells carry no content, so a lost one loses
nothing a page cannot read again, but only if the page learns that it lost one.

So each socket keeps, per process and numbered group, the last ring number it heard
(``Heard``, from the doorbells' ``counts``); a number skipped means doorbells were dropped on the
way. And every ``WFAPP_LIVE_CHECK_SECONDS`` a socket sends itself a check (through its own
queue, so it is handled after the doorbells queued before it): it joins its groups again (a
no-op unless the layer removed it) and compares what it heard with what this process had rung
when the check was sent. Either way the consumer catches the
page up from its position (``LiveConsumer.caught_behind``); a socket whose queue is too full
even for the check is behind by definition and is closed with ``BEHIND``, which the page's
script (``live.js``) answers by reconnecting (its hello says where it was); the runs list, which
has no catch-up, is closed with ``RELOAD`` and loads again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from channels.exceptions import ChannelFull
from django.conf import settings

from wfapp.store import doorbell

logger = logging.getLogger(__name__)

CHECK_TYPE = "wfapp.check"
BEHIND = 4408  # the close code of a socket too far behind to catch up in place: it reconnects
RELOAD = 4409  # ... of a page with no catch-up of its own (the runs list): it loads again


class Heard:
    """The last numbered ring this socket heard from each process in each group."""

    def __init__(self) -> None:
        self.last: dict[tuple[str, str], int] = {}

    def missed(self, event: Mapping[str, Any], groups: list[str]) -> bool:
        """Note a doorbell; True when rings to ``groups`` before it never arrived."""
        process = str(event.get("ring", "")).partition("-")[0]
        counts = event.get("counts")
        if not isinstance(counts, dict):
            return False
        skipped = False
        for group, n in counts.items():
            if group not in groups or not isinstance(n, int):
                continue
            last = self.last.get((process, group))
            # The first ring heard from a process starts the count (the page's render read the rest).
            skipped |= last is not None and n > last + 1
            self.last[(process, group)] = max(n, last or 0)
        return skipped

    def behind_here(self, groups: list[str], rung: Mapping[str, int]) -> bool:
        """Whether this process had rung ``groups`` (``rung``: its counts when the check was
        sent) more often than this socket heard: the last doorbells were dropped, with none after
        them to show the gap."""
        behind = False
        for group in groups:
            if group in rung:
                heard = self.last.get((doorbell.PROCESS, group), 0)
                behind |= rung[group] > heard
                self.last[(doorbell.PROCESS, group)] = max(rung[group], heard)
        return behind


def start_checks(layer: Any, channel: str, close: Callable[[int], Awaitable[None]]) -> asyncio.Task[None]:
    """Send ``channel`` a check every ``WFAPP_LIVE_CHECK_SECONDS``; close it if its queue is full."""

    async def check() -> None:
        while True:
            await asyncio.sleep(float(settings.WFAPP_LIVE_CHECK_SECONDS))
            try:
                await layer.send(channel, {"type": CHECK_TYPE, "rung": doorbell.rung_counts()})
            except ChannelFull:
                logger.warning("a live socket fell too far behind (its queue is full); closing it")
                await close(BEHIND)
                return

    return asyncio.ensure_future(check())


async def stop_checks(task: asyncio.Task[None] | None) -> None:
    if task is not None and task is not asyncio.current_task():
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
