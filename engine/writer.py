"""Appending a session's events: one writer per turn, group commit, live folding."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from .errors import ConcurrencyError
from .events import Event, stored_event
from .replay import ReplayIndex
from .store import EventStore

Draft = dict[str, Any]


def _renumbered(event: Event, seq: int) -> Event:
    fields = dict(event.__dict__)
    fields["seq"] = seq
    return stored_event(fields)


def draft(kind: str, node_path: str, author: str, **fields: Any) -> Draft:
    """Start an event's fields; the writer stamps seq, session and invocation."""
    fields["kind"] = kind
    fields["node_path"] = node_path
    fields["author"] = author
    fields["timestamp"] = time.time()
    return fields


class LogWriter:
    """Appends drafts in order with ``expected_seq`` and folds them into the index.

    ``write`` returns once the drafts are committed. Drafts queued while an append is in
    flight go out together in the next one (group commit). When someone else appended
    answers meanwhile (a person answering while the run executes), the writer folds them in
    and appends after them; any other foreign event means the run moved on without us. ``enqueue`` queues a draft
    without waiting; it goes out with the next write, or soon after on its own.
    """

    def __init__(self, store: EventStore, session_id: str, invocation_id: str, index: ReplayIndex) -> None:
        self._store = store
        self._session_id = session_id
        self._invocation_id = invocation_id
        self._index = index
        self._buffer: list[Draft] = []
        self._lock = asyncio.Lock()
        self._failure: BaseException | None = None
        self._kick: asyncio.Handle | None = None  # a flush of what enqueue queued, soon
        self._background: set[asyncio.Task[None]] = set()
        self._inflight: asyncio.Task[None] | None = None
        self._nowait: Callable[..., int] | None = getattr(store, "append_nowait", None)
        self.absorbed_answers = 0  # answers others appended during this turn
        self.absorbs = True  # False: a foreign append refuses the write (the caller checks again)
        self._sealed = False
        self.listeners: list[Callable[[Event], None]] = []
        # A store that passes notes on to whoever watches a run offers ``publish`` (Context.publish).
        self.publisher: Callable[[str, str, dict[str, Any]], Awaitable[None]] | None = getattr(
            store, "publish", None
        )

    @property
    def last_seq(self) -> int:
        return self._index.last_seq

    def raise_if_broken(self) -> None:
        """Re-raise the store's refusal of an earlier append (a lost lease, a stale seq)."""
        if self._failure is not None:
            raise self._failure

    def enqueue(self, item: Draft) -> None:
        self._buffer.append(item)
        if self._kick is None:
            self._kick = asyncio.get_running_loop().call_soon(self._flush_soon)

    def _flush_soon(self) -> None:
        self._kick = None
        if self._buffer:
            # Even while an append is in flight: it took its batch already, and nothing else
            # would commit these before the next write (a node's "started" waited for its end).
            task = asyncio.ensure_future(self.flush())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

    async def write(self, *items: Draft) -> None:
        if not self.write_now(*items):
            await self._flush_locked()

    def write_now(self, *items: Draft) -> bool:
        """Queue ``items`` and commit them here if the store's append never waits.

        True: committed. False: they are queued and the caller must ``await flush()``
        (``write`` does), never write them again; this spares a coroutine per write on
        the in-memory store.
        """
        if self._sealed:
            # The turn already wrote its final status: a straggler (a child its caller never
            # awaited) stops here instead of writing after it.
            raise asyncio.CancelledError("the run's turn has ended")
        self._buffer.extend(items)
        return self._commit_now()

    def _commit_now(self) -> bool:
        """Commit the queue here through ``append_nowait`` when nothing is in flight.

        False: take the usual path (a store whose append waits, an append in flight, or
        someone else appended meanwhile: the usual path folds that in).
        """
        append = self._nowait
        if append is None or self._inflight is not None or self._lock.locked():
            return False
        if self._failure is not None:
            raise self._failure
        if not self._buffer:
            return True
        batch, self._buffer = self._buffer, []
        events = self._stamp(batch)
        try:
            append(self._session_id, events, expected_seq=self._index.last_seq)
        except ConcurrencyError:
            self._buffer[:0] = batch
            return False
        except BaseException as error:
            self._failure = error
            raise
        self._fold(events)
        return True

    def seal(self) -> None:
        """Refuse every later write: the turn's final status is in the log."""
        self._sealed = True

    async def flush(self) -> None:
        """Commit everything queued so far.

        The append itself runs as its own task, shielded: a caller cancelled mid-append (a
        timeout, a TaskGroup) does not cut a commit in half, the log and the index stay in
        step, and the next flush waits for it. A store whose append never waits
        (``append_nowait``, the in-memory one) is called right here: nothing to cut in half.
        """
        if not self._commit_now():
            await self._flush_locked()

    async def _flush_locked(self) -> None:
        async with self._lock:
            inflight = self._inflight
            if inflight is not None:
                if not inflight.done():
                    await asyncio.shield(inflight)
                self._inflight = None
            if self._failure is not None:
                raise self._failure
            if not self._buffer:
                return
            batch, self._buffer = self._buffer, []
            expected = self._index.last_seq
            events = self._stamp(batch)
            # Eager: an in-memory append finishes right here, without a trip through the loop.
            commit = asyncio.Task(
                self._commit(events, expected), loop=asyncio.get_running_loop(), eager_start=True
            )
            if not commit.done():
                self._inflight = commit
                await asyncio.shield(commit)
                self._inflight = None
            elif self._failure is not None:
                raise self._failure

    def _stamp(self, batch: list[Draft]) -> list[Event]:
        seq = self._index.last_seq
        session_id, invocation_id = self._session_id, self._invocation_id
        events = []
        for item in batch:
            seq += 1
            item["seq"] = seq
            item["session_id"] = session_id
            item["invocation_id"] = invocation_id
            events.append(stored_event(item))
        return events

    async def _commit(self, events: list[Event], expected: int) -> None:
        try:
            while True:
                try:
                    await self._store.append(self._session_id, events, expected_seq=expected)
                    break
                except ConcurrencyError:
                    if not self.absorbs:
                        raise
                    expected = await self._absorb_answers(expected)
                    events = [_renumbered(event, expected + 1 + n) for n, event in enumerate(events)]
        except asyncio.CancelledError:
            raise
        except BaseException as error:
            self._failure = error
            raise
        self._fold(events)

    async def _absorb_answers(self, expected: int) -> int:
        """Fold answers, decisions on questions and comments someone appended meanwhile; anything
        else means the run moved on."""
        newer = await self._store.list_events(self._session_id, after_seq=expected)
        if not newer or any(event.kind not in ("answer", "assignment", "comment") for event in newer):
            raise ConcurrencyError(self._session_id, expected, newer[-1].seq if newer else expected)
        self._fold(newer)
        self.absorbed_answers += sum(1 for event in newer if event.kind == "answer")
        return newer[-1].seq

    def _fold(self, events: list[Event]) -> None:
        apply = self._index.apply
        listeners = self.listeners
        if not listeners:
            for event in events:
                apply(event)
            return
        for event in events:
            apply(event)
            for listener in listeners:
                listener(event)

    async def close(self) -> None:
        """Wait for background flushes and commit what is left."""
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
        await self.flush()
        if self._kick is not None:
            # Nothing is left for it to flush; cancelled, it lets go of this writer (and the
            # run's index) now rather than at the loop's next turn, after the run returned.
            self._kick.cancel()
            self._kick = None
