"""Group commit across runs on PostgreSQL: appends that queue up together share one commit.

With ``synchronous_commit=on`` every commit waits for the WAL flush, and a run's node waits
for its events' commit before its successors start. Here a node's batch (no question, answer
or status change: the batches the inline SQLite path takes) joins a queue per event loop; one
commit at a time takes everything queued (one batch per run) and writes it as one statement
(``sql.group_append``: every run's conditional update of its session row and the
inserts of the events of those that matched), and every run waiting on it goes on once it is
committed. That statement runs on the event loop itself, on an asyncio connection of the
loop's own: a hand-off to a store thread and back costs a thread switch per round trip, and
while the loop runs nodes a thread waits for the GIL (up to its 5 ms switch interval) at each
of them. A run whose row did not match (another writer, a lost lease) had nothing written and
gets its error; anything else going wrong retries each batch on its own in the store threads.
On SQLite (``group_commit=True`` there is for tests) the group is one transaction in a store
thread.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import psycopg
from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from engine import Event
from wfapp.store import cache, sql

if TYPE_CHECKING:
    from wfapp.store.events import DjangoEventStore, _Batch


@dataclass(slots=True)
class _Queued:
    store: DjangoEventStore
    session_id: str
    events: Sequence[Event]
    expected_seq: int
    batch: _Batch
    done: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class GroupCommit:
    """One event loop's queue of hot appends, the commit in flight and its connection."""

    def __init__(self, run_in_thread: Callable[..., Awaitable[Any]]) -> None:
        self._run_in_thread = run_in_thread
        self._queue: list[_Queued] = []
        self._committing: asyncio.Task[None] | None = None
        self._conn: psycopg.AsyncConnection[Any] | None = None
        self._sql: str | None = None
        self.transactions = 0  # commits so far, and the appends they carried
        self.appends = 0

    async def append(
        self,
        store: DjangoEventStore,
        session_id: str,
        events: Sequence[Event],
        expected_seq: int,
        batch: _Batch,
    ) -> None:
        item = _Queued(store, session_id, events, expected_seq, batch)
        self._queue.append(item)
        if self._committing is None:
            self._committing = asyncio.ensure_future(self._commit_queued())
        try:
            await asyncio.shield(item.done)  # a cancelled caller does not cut its commit in half
        except asyncio.CancelledError:
            item.done.add_done_callback(_heard)  # its refusal (a lost lease, say) has no one to hear it
            raise

    async def _commit_queued(self) -> None:
        try:
            while self._queue:
                group, self._queue = _one_per_run(self._queue)
                try:
                    errors = await self._commit(group)
                except asyncio.CancelledError:
                    for item in group:
                        item.done.cancel()
                    raise
                except Exception as failure:  # every waiter hears of it
                    errors = [failure] * len(group)
                self.transactions += 1
                self.appends += len(group)
                for item, refused in zip(group, errors, strict=True):
                    if refused is None:
                        item.done.set_result(None)
                    else:
                        item.done.set_exception(refused)
        finally:
            self._committing = None

    async def _commit(self, group: list[_Queued]) -> list[BaseException | None]:
        if connection.vendor != "postgresql":
            refused: list[BaseException | None] = await self._run_in_thread(None, commit_group, group)
            return refused
        try:
            updated = await self._statement(group)
        except asyncio.CancelledError:
            await self.close()  # the statement's outcome is unknown: the connection goes
            raise
        except psycopg.Error:
            if self._conn is not None and self._conn.broken:
                await self.close()
            # Each on its own, through Django: one bad batch does not fail the others.
            return [await self._run_in_thread(item.session_id, _alone, item) for item in group]
        errors: list[BaseException | None] = [None] * len(group)
        for n, item in enumerate(group):
            if item.session_id not in updated:  # nothing of it was written
                errors[n] = await self._run_in_thread(
                    item.session_id, item.store.refusal, item.session_id, item.expected_seq
                )
            else:
                _committed(item)
        return errors

    async def _statement(self, group: list[_Queued]) -> set[str]:
        """Run ``sql.group_append`` for the group (autocommit: it is its own transaction)."""
        if self._conn is None:
            params = connection.get_connection_params()
            for django_only in ("cursor_factory", "context", "prepare_threshold"):
                params.pop(django_only, None)
            self._conn = await psycopg.AsyncConnection.connect(**params, autocommit=True)
            self._sql = sql.group_append(connection.ops.quote_name)
        parts = [sql.group_rows(i.session_id, i.events, i.batch.lease) for i in group]
        rows = f"[{','.join(row for row, _ in parts)}]"
        events = f"[{','.join(events for _, events in parts)}]"
        touch = sql.touch_times(timezone.now(), False)
        assert self._sql is not None
        cursor = await self._conn.execute(self._sql, [rows, *touch, events], prepare=True)
        return {row[0] for row in await cursor.fetchall()}

    async def close(self) -> None:
        """Close this loop's connection (the next commit opens another)."""
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.close()


def _committed(item: _Queued) -> None:
    item.store.settle(item.session_id, item.batch.last_seq, item.batch.known_clear)
    cache.LOGS.appended(item.session_id, item.expected_seq, item.events)


def _heard(done: asyncio.Future[None]) -> None:
    if not done.cancelled():
        done.exception()


def _one_per_run(queue: list[_Queued]) -> tuple[list[_Queued], list[_Queued]]:
    """Split the queue: a group holds one batch per run (a second one waits for the next)."""
    group: list[_Queued] = []
    rest: list[_Queued] = []
    seen: set[str] = set()
    for item in queue:
        (rest if item.session_id in seen else group).append(item)
        seen.add(item.session_id)
    return group, rest


def commit_group(group: list[_Queued]) -> list[BaseException | None]:
    """SQLite: write every queued batch in one transaction; return each one's error (None: committed)."""
    statements = sql.for_connection(connection)
    touch = [connection.ops.adapt_datetimefield_value(t) for t in sql.touch_times(timezone.now(), False)]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            accepted = set()
            for n, item in enumerate(group):
                lease = item.batch.lease
                params = [item.batch.last_seq, *touch, item.session_id, item.expected_seq, *(lease or ())]
                cursor.execute(statements.update_session((), lease is not None), params)
                if cursor.rowcount == 1:
                    accepted.add(n)
            rows = [(item.session_id, item.events) for n, item in enumerate(group) if n in accepted]
            for statement, params in statements.insert_rows(rows):
                cursor.execute(statement, params)
    except DatabaseError:
        if len(group) == 1:
            raise
        return [_alone(item) for item in group]  # one of them broke the group: each on its own
    errors: list[BaseException | None] = [None] * len(group)
    for n, item in enumerate(group):
        if n not in accepted:  # nothing of it was written
            errors[n] = item.store.refusal(item.session_id, item.expected_seq)
        else:
            _committed(item)
    return errors


def _alone(item: _Queued) -> BaseException | None:
    try:
        item.store.append_sync(item.session_id, list(item.events), item.expected_seq)
    except Exception as error:
        return error
    return None


_BY_LOOP: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, GroupCommit] = weakref.WeakKeyDictionary()


def for_loop(run_in_thread: Callable[..., Awaitable[Any]]) -> GroupCommit:
    """The running loop's group commit (the runtime's stores on one loop share it)."""
    loop = asyncio.get_running_loop()
    group = _BY_LOOP.get(loop)
    if group is None:
        group = _BY_LOOP[loop] = GroupCommit(run_in_thread)
    return group


async def close_loop() -> None:
    """Close the running loop's group commit connection, if it has one."""
    group = _BY_LOOP.get(asyncio.get_running_loop())
    if group is not None:
        await group.close()
