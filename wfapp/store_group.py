"""Group commit across runs on PostgreSQL: appends that queue up together share one transaction.

With ``synchronous_commit=on`` every commit waits for the WAL flush (about a millisecond),
and a run's node waits for its events' commit before its successors start. The runtime's
stores run their transactions in one thread, so with many runs in flight each node's append
used to wait for everyone else's flush too. Here a node's batch (no question, answer or
status change: the batches the inline SQLite path takes) joins a queue; one commit at a
time takes everything queued and writes it in one transaction, each run's conditional
update and inserts as usual, and every run waiting on it goes on once it is committed. A
run whose update matches nothing (another writer, a lost lease) writes nothing and gets its
error; anything else going wrong rolls the group back and each batch is retried on its own.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from django.db import DatabaseError, connection, transaction
from django.utils import timezone

from engine import Event

from . import store_cache, store_sql

if TYPE_CHECKING:
    from .store import DjangoEventStore, _Batch


@dataclass(slots=True)
class _Queued:
    store: DjangoEventStore
    session_id: str
    events: Sequence[Event]
    expected_seq: int
    batch: _Batch
    done: asyncio.Future[None] = field(default_factory=lambda: asyncio.get_running_loop().create_future())


class GroupCommit:
    """One event loop's queue of hot appends and the commit in flight."""

    def __init__(self, run_in_thread: Callable[..., Awaitable[Any]]) -> None:
        self._run_in_thread = run_in_thread
        self._queue: list[_Queued] = []
        self._committing: asyncio.Task[None] | None = None
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
                    errors = await self._run_in_thread(commit_group, group)
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
    """Write every queued batch in one transaction; return each one's error (None: committed).

    On PostgreSQL the whole group is two statements (one update of every session row, one
    insert of every event), so a bigger group costs little more than one run's append.
    """
    sql = store_sql.for_connection(connection)
    touch = [
        connection.ops.adapt_datetimefield_value(t) for t in store_sql.touch_times(timezone.now(), False)
    ]
    try:
        with transaction.atomic(), connection.cursor() as cursor:
            if connection.vendor == "postgresql":
                accepted = _update_together(cursor, sql, touch, group)
            else:
                accepted = _update_each(cursor, sql, touch, group)
            rows = [(item.session_id, item.events) for n, item in enumerate(group) if n in accepted]
            for statement, params in sql.insert_rows(rows):
                cursor.execute(statement, params)
    except DatabaseError:
        if len(group) == 1:
            raise
        return [_alone(item) for item in group]  # one of them broke the group: each on its own
    errors: list[BaseException | None] = [None] * len(group)
    for n, item in enumerate(group):
        if n not in accepted:  # nothing of it was written
            errors[n] = item.store.refusal(item.session_id, item.expected_seq)
            continue
        item.store.settle(item.session_id, item.batch.last_seq, item.batch.known_clear)
        store_cache.LOGS.appended(item.session_id, item.expected_seq, item.events)
    return errors


def _update_together(
    cursor: Any, sql: store_sql.AppendSQL, touch: list[Any], group: list[_Queued]
) -> set[int]:
    params = list(touch)
    for item in group:
        owner, epoch = item.batch.lease or (None, None)
        params += (item.session_id, item.expected_seq, item.batch.last_seq, owner, epoch)
    cursor.execute(sql.update_sessions(len(group)), params)
    updated = {row[0] for row in cursor.fetchall()}
    return {n for n, item in enumerate(group) if item.session_id in updated}


def _update_each(cursor: Any, sql: store_sql.AppendSQL, touch: list[Any], group: list[_Queued]) -> set[int]:
    accepted = set()
    for n, item in enumerate(group):
        lease = item.batch.lease
        params = [item.batch.last_seq, *touch, item.session_id, item.expected_seq, *(lease or ())]
        cursor.execute(sql.update_session((), lease is not None), params)
        if cursor.rowcount == 1:
            accepted.add(n)
    return accepted


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
