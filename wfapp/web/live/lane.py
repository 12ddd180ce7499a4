"""One socket's work, one piece at a time, with the doorbells it has not acted on yet folded.

A consumer used to act on each message as the channel layer handed it over: while it rendered
one update, the doorbells behind it waited in the socket's queue, and under load (ten answers a
second, each ringing a few times) the queue filled faster than one socket could render, until the
layer dropped doorbells or the socket was closed as too far behind. Doorbells carry no content: the
update a page needs depends on what changed since its position, not on how many rings said so.
So a doorbell only notes its run here and returns, and so does every other message: ``Lane`` does
the work noted, in the order first noted, one piece at a time (fragments go out in order), each
run once with its latest ring, while the rings that arrive meanwhile fold into what is still to
do. A socket fallen behind (``behind``) is caught up once, which covers the rings noted before.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Hashable

logger = logging.getLogger(__name__)

Work = Callable[[], Awaitable[None]]
_BEHIND = object()  # the key of the catch-up


class Lane:
    def __init__(self, ring: Callable[[str, int], Awaitable[None]], catch_up: Work, failed: Work) -> None:
        self._ring = ring
        self._catch_up = catch_up
        self._failed = failed  # the work raised: the socket closes, the page reconnects
        self._due: dict[Hashable, tuple[str, int] | Work] = {}
        self._task: asyncio.Task[None] | None = None

    def ring(self, key: Hashable, session_id: str, seq: int) -> None:
        """Note a doorbell; ``key``: what it folds with (the latest ring of a key is acted on)."""
        kept = self._due.get(key)
        if not (isinstance(kept, tuple) and kept[1] > seq):
            self._due[key] = (session_id, seq)
        self._start()

    def then(self, work: Work) -> None:
        """Do ``work`` after what is noted so far (a hello, a page's request, a streamed note)."""
        self._due[object()] = work
        self._start()

    def behind(self) -> None:
        """Doorbells were lost on their way: catch the page up; it covers the rings noted so far."""
        for key in [key for key, item in self._due.items() if isinstance(item, tuple)]:
            del self._due[key]
        self._due[_BEHIND] = self._catch_up
        self._start()

    async def stop(self) -> None:
        task, self._task = self._task, None
        self._due.clear()
        if task is not None and task is not asyncio.current_task():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._due:
                key = next(iter(self._due))
                item = self._due.pop(key)
                if isinstance(item, tuple):
                    await self._ring(*item)
                else:
                    await item()
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.exception("a live update failed; closing the socket (the page reconnects)")
            self._due.clear()
            await self._failed()
