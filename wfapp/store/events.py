"""``DjangoEventStore``: the engine's event log in the database.

Each operation is one synchronous transaction run in a worker thread (Django has no
transactions in async code): through asgiref's ``sync_to_async`` by default, which joins the
caller's thread when it was reached from synchronous code (``async_to_sync`` in a view, the
admin, a test's transaction); or, for callers that own their event loop (the runtime's
workers, the benchmark), in the stores' own long-lived threads, reached with a plain executor
hand-off: a node's append is on the hot path, and that hand-off costs a third less. On SQLite
that is one thread (one writer at a time anyway); on PostgreSQL ``WFAPP_STORE_THREADS``, each
run's operations in the thread its id picks, so they keep their order while other runs' commits
proceed beside them (each commit waits for its WAL flush: one thread capped a worker at the
runs' fixed costs, about ten runs a second). An append updates the session row first, conditionally on
``last_seq`` (and on the lease epoch when the store holds a lease), which serialises
writers to one run on PostgreSQL's row lock and SQLite's IMMEDIATE write lock alike; it then
inserts the events and keeps the projections (inbox rows, status, output, error, answer
attempts) in the same transaction. A doorbell rings after the commit.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import IntegrityError, connection, connections, transaction
from django.db.models import Field
from django.utils import timezone
from pydantic import TypeAdapter, ValidationError

from engine import Event, SessionInfo, asking_digest
from engine.errors import (
    AskingChangedError,
    AskingClosedError,
    ConcurrencyError,
    InterruptAlreadyAnswered,
    SessionExistsError,
    UnknownInterruptError,
    UnknownSessionError,
    UnreadableLogError,
)
from engine.events import Answer
from engine.store import STATUSES
from wfapp.errors import LeaseLostError
from wfapp.models import AnswerAttempt, AttemptOutcome, Interrupt, InterruptStatus, RunStatus, Session
from wfapp.models import Event as EventRow
from wfapp.run_labels import summary_of
from wfapp.store import cache, doorbell, group, hooks, inbox_rows, inline, sql
from wfapp.store.lease import Lease

_SETTLED = frozenset({RunStatus.WAITING, RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED})
_CLOSING = frozenset({RunStatus.COMPLETED, RunStatus.CANCELLED})


logger = logging.getLogger(__name__)
_EVENT_LIST = TypeAdapter(list[Event])
_THREADS: list[ThreadPoolExecutor] = []


def _threads() -> list[ThreadPoolExecutor]:
    if not _THREADS:  # first use: the settings are loaded by then
        postgres = "postgresql" in settings.DATABASES["default"]["ENGINE"]
        count = max(1, int(settings.WFAPP_STORE_THREADS)) if postgres else 1
        _THREADS.extend(ThreadPoolExecutor(1, thread_name_prefix=f"wfapp-store{n}") for n in range(count))
    return _THREADS


async def _in_own_thread[**P, T](
    run: str | None, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run ``fn`` in the store thread of the run ``run`` (the session id; None: the first thread).

    A run's operations all go to one thread, so they keep their order.
    """
    threads = _threads()
    thread = threads[hash(run) % len(threads)] if run is not None and len(threads) > 1 else threads[0]
    return await asyncio.get_running_loop().run_in_executor(thread, functools.partial(fn, *args, **kwargs))


async def close_connections() -> None:
    """Close the database connections of the threads the stores run in and of this loop's
    group commit (at shutdown, or before a test database is dropped)."""
    await sync_to_async(connections.close_all)()
    loop = asyncio.get_running_loop()
    await asyncio.gather(*(loop.run_in_executor(thread, connections.close_all) for thread in _threads()))
    await group.close_loop()
    inline.close_all()


async def _in_sync_context[**P, T](
    run: str | None, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
) -> T:
    """Run ``fn`` through ``sync_to_async`` (``run``, the session id, picks no thread here)."""
    return await sync_to_async(fn)(*args, **kwargs)


def _checkpoint() -> None:
    """Move the WAL's pages into the database file (the inline appends never do)."""
    with connection.cursor() as cursor:
        cursor.execute("PRAGMA wal_checkpoint(PASSIVE)")


def _log_failure(future: asyncio.Future[None]) -> None:
    if not future.cancelled() and future.exception() is not None:
        logger.warning("WAL checkpoint failed", exc_info=future.exception())


@dataclass(frozen=True, slots=True)
class _Batch:
    """What an append of one batch has to do."""

    last_seq: int
    updates: dict[str, Any]  # session columns its status events change
    project: bool  # whether the inbox rows may change
    known_clear: bool  # the store knew the run had no pending question at the batch's start
    lease: tuple[str, int] | None  # (owner, epoch) the session row must still carry


@dataclass(frozen=True, slots=True)
class _Appended:
    last_seq: int
    status_changed: bool
    inbox_changed: bool


@dataclass(frozen=True, slots=True)
class _OutputAt:
    """The run's output is that of the event at ``seq`` (the status points at it)."""

    seq: int


def _resolve_output(session_id: str, updates: dict[str, Any], events: Sequence[Event]) -> None:
    """Fill the Session.output projection from the event the completed status points at."""
    ref = updates.get("output")
    if not isinstance(ref, _OutputAt):
        return
    for event in events:
        if event.seq == ref.seq:
            updates["output"] = Event(output=event.output).model_dump(mode="json")["output"]
            return
    data = EventRow.objects.filter(session_id=session_id, seq=ref.seq).values_list("data", flat=True).first()
    updates["output"] = (data or {}).get("output")


def _session_updates(events: Sequence[Event]) -> dict[str, Any]:
    """The session columns a batch's status events change, besides ``last_seq``/``updated_at``."""
    updates: dict[str, Any] = {}
    for event in events:
        if event.kind == "status" and event.status:
            updates["status"] = event.status
            if event.status in _SETTLED:
                updates["settled_seq"] = event.seq
            if event.status in (RunStatus.COMPLETED, RunStatus.RUNNING):
                updates["error"] = None  # a retried run that now succeeds has no error
            if event.status == RunStatus.COMPLETED:
                updates["output"] = (
                    _OutputAt(event.output_seq)
                    if event.output is None and event.output_seq
                    else Event(output=event.output).model_dump(mode="json")["output"]
                )
            if event.status == RunStatus.FAILED and event.error is not None:
                updates["error"] = event.error.model_dump(mode="json", exclude_none=True)
    return updates


def _adapt(column: str, value: Any) -> Any:
    field = Session._meta.get_field(column)
    assert isinstance(field, Field)
    return field.get_db_prep_save(value, connection)


def _unreadable(
    session_id: str, after_seq: int, rows: list[str], error: ValidationError
) -> UnreadableLogError:
    """Say which event of a log that does not parse is the first one that cannot be read, and why."""
    for seq, text in enumerate(rows, start=after_seq + 1):  # seqs have no gaps
        try:
            Event.model_validate_json(text)
        except ValidationError as bad:
            return UnreadableLogError(session_id, _reason(bad), seq)
    return UnreadableLogError(session_id, _reason(error))


def _reason(error: ValidationError) -> str:
    first = error.errors(include_url=False)[0]
    where = ".".join(map(str, first["loc"][1:] if first["loc"][:1] == (0,) else first["loc"]))
    return f"{first['msg']}" + (f" (in {where})" if where else "")


def _not_pending(session_id: str, answer: Answer) -> Exception:
    """Why an answer found no pending row to record it on: answered (by whom, when), asked
    again or withdrawn since, or given to other content than the asking shows."""
    rows = Interrupt.objects.filter(session_id=session_id, interrupt_id=answer.interrupt_id)
    if answer.request_seq is not None:
        rows = rows.filter(request_seq=answer.request_seq)
    row = rows.order_by("-request_seq").values("status", "answered_by", "answered_at", "digest").first()
    if row is None:
        return UnknownInterruptError(session_id, [answer.interrupt_id])
    if row["status"] == InterruptStatus.ANSWERED:
        return InterruptAlreadyAnswered(answer.interrupt_id, row["answered_by"], row["answered_at"])
    if answer.request_seq is None:
        return UnknownInterruptError(session_id, [answer.interrupt_id])
    if row["status"] == InterruptStatus.PENDING:
        return AskingChangedError(answer.interrupt_id, answer.request_seq)
    pending_seq = (
        Interrupt.objects.filter(
            session_id=session_id, interrupt_id=answer.interrupt_id, status=InterruptStatus.PENDING
        )
        .values_list("request_seq", flat=True)
        .first()
    )
    return AskingClosedError(answer.interrupt_id, answer.request_seq, pending_seq)


class DjangoEventStore:
    """The ``EventStore`` for Django; with a ``lease`` it only writes while the lease holds."""

    def __init__(
        self, lease: Lease | None = None, *, own_thread: bool = False, group_commit: bool | None = None
    ) -> None:
        self.lease = lease
        # own_thread: only for callers that own their event loop (see the module's docstring).
        self._in_thread = _in_own_thread if own_thread else _in_sync_context
        self._inline = inline.for_default_database() if own_thread else None
        # The runtime's stores group the nodes' appends of many runs per commit (``group``):
        # by default on PostgreSQL, where each commit waits for the WAL flush.
        if group_commit is None:
            group_commit = "postgresql" in settings.DATABASES["default"]["ENGINE"]
        self._grouped = own_thread and group_commit
        self._checkpoint: asyncio.Future[None] | None = None
        # session id -> the last_seq at which this store knew the run had no pending question:
        # an append right after it needs no inbox lookup when an execution ends.
        self._clear: dict[str, int] = {}

    # -- the protocol ---------------------------------------------------------------------

    async def unknown_names(self, names: list[str]) -> list[str]:
        """The names among a question's assignees that are no user or group (``engine.human``)."""
        return await self._in_thread(None, inbox_rows.unknown_names_sync, names)

    async def create_session(
        self, session_id: str, workflow: str, node_input: Any, *, version: str | None = None
    ) -> None:
        await self._in_thread(session_id, self.create_session_sync, session_id, workflow, node_input, version)
        await doorbell.ring(session_id, 0, runs=True)

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        if not events:
            return expected_seq
        if self._grouped:
            batch = self._plan(session_id, events, expected_seq)
            if not batch.project and not batch.updates:
                await group.for_loop(self._in_thread).append(self, session_id, events, expected_seq, batch)
                await doorbell.ring(session_id, batch.last_seq)
                return batch.last_seq
        elif self._inline is not None:
            batch = self._plan(session_id, events, expected_seq)
            if not batch.project and not batch.updates:
                if self._inline.append(session_id, events, expected_seq, batch.lease):
                    self.settle(session_id, batch.last_seq, batch.known_clear)
                    cache.LOGS.appended(session_id, expected_seq, events)
                    if self._inline.commits % inline.CHECKPOINT_EVERY == 0:
                        self._checkpoint = asyncio.ensure_future(self._in_thread(None, _checkpoint))
                        self._checkpoint.add_done_callback(_log_failure)
                    await doorbell.ring(session_id, batch.last_seq)
                    return batch.last_seq
        done = await self._in_thread(session_id, self.append_sync, session_id, list(events), expected_seq)
        await doorbell.ring(session_id, done.last_seq, runs=done.status_changed, inbox=done.inbox_changed)
        return done.last_seq

    async def publish(self, session_id: str, node_path: str, note: dict[str, Any]) -> None:
        """Pass an ephemeral note (a model's text as it streams) to the run's live pages; nothing is stored."""
        await doorbell.publish(session_id, node_path, note)

    async def list_events(self, session_id: str, after_seq: int = 0) -> list[Event]:
        return await self._in_thread(session_id, self.list_events_sync, session_id, after_seq)

    async def get_session(self, session_id: str) -> SessionInfo:
        return await self._in_thread(session_id, self.get_session_sync, session_id)

    async def set_status(self, session_id: str, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; expected one of {STATUSES}")
        last_seq = await self._in_thread(session_id, self.set_status_sync, session_id, status)
        await doorbell.ring(session_id, last_seq, runs=True)

    @property
    def group_commit(self) -> group.GroupCommit | None:
        """The running loop's group commit when this store groups its appends (else None)."""
        return group.for_loop(self._in_thread) if self._grouped else None

    # -- synchronous bodies (each one transaction) ---------------------------------------------

    def _scoped(self, session_id: str) -> Any:
        rows = Session.objects.filter(pk=session_id)
        if self.lease is not None and self.lease.session_id == session_id:
            rows = rows.filter(lease_owner=self.lease.owner, lease_epoch=self.lease.epoch)
        return rows

    def refusal(self, session_id: str, expected_seq: int | None = None) -> Exception:
        """Why a conditional update of the session row matched nothing."""
        row = Session.objects.filter(pk=session_id).values("last_seq", "lease_owner", "lease_epoch").first()
        if row is None:
            return UnknownSessionError(session_id)
        lease = self.lease
        if (
            lease is not None
            and lease.session_id == session_id
            and ((row["lease_owner"], row["lease_epoch"]) != (lease.owner, lease.epoch))
        ):
            return LeaseLostError(session_id, lease.owner, lease.epoch)
        return ConcurrencyError(session_id, expected_seq if expected_seq is not None else -1, row["last_seq"])

    def create_session_sync(
        self, session_id: str, workflow: str, node_input: Any, version: str | None = None
    ) -> None:
        lease = self.lease
        with transaction.atomic():
            if lease is not None and lease.session_id == session_id:
                # A worker adopts the run it reserved (created empty and leased) before starting it.
                if self._scoped(session_id).filter(last_seq=0, workflow=workflow).exists():
                    return
            try:
                with transaction.atomic():
                    Session.objects.create(
                        id=session_id,
                        workflow=workflow,
                        version=version or "",
                        input=node_input,
                        summary=summary_of(workflow, version, node_input),
                    )
            except IntegrityError:
                raise SessionExistsError(session_id) from None

    def _plan(self, session_id: str, events: Sequence[Event], expected_seq: int) -> _Batch:
        for offset, event in enumerate(events, start=1):
            if event.seq != expected_seq + offset:
                raise ValueError(f"event seq {event.seq} should be {expected_seq + offset}")
        updates = _session_updates(events)
        status = updates.get("status")
        asks = any(event.kind in ("interrupt", "answer", "assignment") for event in events)
        ends = any(event.kind in ("error", "completed") for event in events)
        known_clear = self._clear.get(session_id) == expected_seq
        lease = self.lease
        return _Batch(
            last_seq=expected_seq + len(events),
            updates=updates,
            project=asks or status in _CLOSING or (ends and not known_clear),
            known_clear=known_clear,
            lease=(lease.owner, lease.epoch)
            if lease is not None and lease.session_id == session_id
            else None,
        )

    def settle(self, session_id: str, last_seq: int, clear: bool) -> None:
        if clear:
            self._clear[session_id] = last_seq
        else:
            self._clear.pop(session_id, None)

    def append_sync(self, session_id: str, events: list[Event], expected_seq: int) -> _Appended:
        """Append in one transaction (no doorbell): what ``append`` runs in a worker thread.

        A node's events (no questions) are two statements: the conditional update of the
        session row and a multi-row insert (``sql``); the inbox rows are kept only for
        batches that ask, answer, close the run, or end an execution that may have asked.
        """
        batch = self._plan(session_id, events, expected_seq)
        updates, status = batch.updates, batch.updates.get("status")
        _resolve_output(session_id, updates, events)  # events are never rewritten: read before
        statements = sql.for_connection(connection)
        values = [_adapt(column, value) for column, value in updates.items()]
        touch = [
            connection.ops.adapt_datetimefield_value(t) for t in sql.touch_times(timezone.now(), bool(status))
        ]
        params = [batch.last_seq, *touch, *values, session_id, expected_seq, *(batch.lease or ())]
        inbox_changed = False
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(statements.update_session(tuple(updates), batch.lease is not None), params)
            if cursor.rowcount != 1:
                raise self.refusal(session_id, expected_seq)
            for statement, rows in statements.inserts(session_id, events):
                cursor.execute(statement, rows)
            if batch.project:
                inbox_changed, clear = self._project_interrupts(session_id, events, status, batch.known_clear)
            else:
                clear = batch.known_clear or status in _CLOSING
        self.settle(session_id, batch.last_seq, clear)
        if status in _CLOSING or connection.in_atomic_block:
            # A closed run is not resumed again; inside someone's transaction, not committed yet.
            cache.LOGS.forget(session_id)
        else:
            cache.LOGS.appended(session_id, expected_seq, events)
        return _Appended(batch.last_seq, "status" in updates, inbox_changed)

    def _project_interrupts(
        self, session_id: str, events: list[Event], status: str | None, known_clear: bool
    ) -> tuple[bool, bool]:
        """Keep the inbox rows in step; return whether they changed and whether none is pending."""
        changed = False
        workflow: str | None = None
        may_be_pending: bool | None = False if known_clear else None  # looked up when an execution ends
        for event in events:
            if event.kind == "interrupt" and event.interrupt is not None:
                ask = event.interrupt
                if workflow is None:
                    workflow = Session.objects.values_list("workflow", flat=True).get(pk=session_id)
                node_path = event.node_path or ask.node_path
                asked = Interrupt.objects.filter(
                    session_id=session_id, interrupt_id=ask.id, status=InterruptStatus.PENDING
                )
                if asked.filter(node_path=node_path, digest=asking_digest(ask)).exists():
                    # Stated again, unchanged, by the node that asked it (a partial answer's resume):
                    # the same asking, whose row, claims and approvals stand.
                    may_be_pending = True
                    continue
                asked.update(status=InterruptStatus.SUPERSEDED)
                Interrupt.objects.create(
                    session_id=session_id,
                    interrupt_id=ask.id,
                    request_seq=event.seq,
                    workflow=workflow,
                    node_path=node_path,
                    message=ask.message or "",
                    payload=ask.model_dump(mode="json")["payload"],
                    response_schema=ask.response_schema,
                    digest=asking_digest(ask),
                    **inbox_rows.row_fields(ask.human),
                )
                changed = may_be_pending = True
            elif event.kind == "answer" and event.answer is not None:
                self._record_answer(session_id, event)
                changed = True
            elif event.kind == "assignment" and event.assignment is not None:
                inbox_rows.apply_decision(session_id, event.assignment, event.seq)  # claims, escalations, ...
                changed = True
            elif event.kind in ("error", "completed"):
                # A failed or finished execution withdraws the questions it asked itself.
                if may_be_pending is None:
                    may_be_pending = self._pending(session_id).exists()
                if may_be_pending and self._pending(session_id).filter(node_path=event.node_path).update(
                    status=InterruptStatus.WITHDRAWN
                ):
                    changed = True
        if status in _CLOSING:
            changed |= bool(self._pending(session_id).update(status=InterruptStatus.CANCELLED))
            return changed, True
        return changed, may_be_pending is False

    @staticmethod
    def _pending(session_id: str) -> Any:
        return Interrupt.objects.filter(session_id=session_id, status=InterruptStatus.PENDING)

    def _record_answer(self, session_id: str, event: Event) -> None:
        """First answer wins: only a pending row turns answered, in the append's transaction.

        An answer that names its asking (``request_seq``, and the digest of what its giver was
        shown) is recorded only on that row while it is pending: the asking's id asked again
        meanwhile never takes it."""
        answer = event.answer
        assert answer is not None
        actor = answer.actor or event.author
        given = answer.model_dump(mode="json")["value"]
        rows = self._pending(session_id).filter(interrupt_id=answer.interrupt_id)
        if answer.request_seq is not None:
            rows = rows.filter(request_seq=answer.request_seq)
        if answer.digest is not None:
            rows = rows.filter(digest__in=(answer.digest, ""))  # "": a row kept before digests
        fields = {
            "status": InterruptStatus.ANSWERED,
            "answer": given,
            "answered_by": actor,
            "answered_at": timezone.now(),
            "answer_seq": event.seq,
        }
        answered = rows.filter(approvals_required__lte=1).update(**fields)
        if not answered and rows.exists():
            # A quorum: an approval short of its count leaves it pending (wfapp.human.assignment).
            resolved, value = inbox_rows.fold_row_answer(
                session_id, answer.interrupt_id, actor, given, answer.timed_out
            )
            if not resolved:
                self._accepted(session_id, event, actor, given)
                return
            answered = rows.update(**(fields | {"answer": value}))
        if not answered:
            raise _not_pending(session_id, answer)
        self._accepted(session_id, event, actor, given)
        hooks.answer_recorded.send(DjangoEventStore, session_id=session_id)  # workers mode: its advance job

    @staticmethod
    def _accepted(session_id: str, event: Event, actor: str, value: Any) -> None:
        assert event.answer is not None
        AnswerAttempt.objects.create(
            session_id=session_id,
            interrupt_id=event.answer.interrupt_id,
            actor=actor,
            value=value,
            outcome=AttemptOutcome.ACCEPTED,
            event_seq=event.seq,
            request_seq=event.answer.request_seq,
            digest=event.answer.digest or "",
        )

    def list_events_sync(self, session_id: str, after_seq: int = 0, limit: int | None = None) -> list[Event]:
        """The events after ``after_seq``, in order (at most ``limit`` of them).

        Without a limit, the logs of active runs come from ``cache`` and only what was
        appended since is read.
        """
        if limit is None and not connection.in_atomic_block:  # only committed rows are kept
            row = Session.objects.filter(pk=session_id).values_list("created_at", "last_seq").first()
            if row is None:
                raise UnknownSessionError(session_id)
            return cache.LOGS.read(session_id, after_seq, row, functools.partial(self._read, session_id))
        return self._read(session_id, after_seq, limit)

    def _read(self, session_id: str, after_seq: int, limit: int | None = None) -> list[Event]:
        query = sql.for_connection(connection).select_events(limit is not None)
        params: list[Any] = [session_id, after_seq] if limit is None else [session_id, after_seq, limit]
        with connection.cursor() as cursor:
            cursor.execute(query, params)
            rows = cursor.fetchall()
        if not rows:
            if not Session.objects.filter(pk=session_id).exists():
                raise UnknownSessionError(session_id)
            return []
        try:
            return _EVENT_LIST.validate_json("[" + ",".join([row[0] for row in rows]) + "]")
        except ValidationError as error:
            raise _unreadable(session_id, after_seq, [row[0] for row in rows], error) from None

    def get_session_sync(self, session_id: str) -> SessionInfo:
        """What the store knows about a run besides its events."""
        try:
            row = Session.objects.get(pk=session_id)
        except Session.DoesNotExist:
            raise UnknownSessionError(session_id) from None
        return SessionInfo(
            session_id=row.pk,
            workflow=row.workflow,
            status=row.status,
            last_seq=row.last_seq,
            input=row.input,
            created_at=row.created_at.timestamp(),
            updated_at=row.updated_at.timestamp(),
            version=row.version or None,
        )

    def set_status_sync(self, session_id: str, status: str) -> int:
        with transaction.atomic():
            if not self._scoped(session_id).update(status=status, updated_at=timezone.now()):
                raise self.refusal(session_id)
            return Session.objects.values_list("last_seq", flat=True).get(pk=session_id)
