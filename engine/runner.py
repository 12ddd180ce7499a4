"""``Runner``: starts, resumes, answers, cancels and reports runs of one workflow."""

from __future__ import annotations

import asyncio
import time
import uuid
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from . import human
from .answers import Asking, check_answer, check_asking
from .errors import (
    AskingClosedError,
    ConcurrencyError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    InvalidInputError,
    NoAnswersError,
    NotFailedNodeError,
    ReplayDivergenceError,
    SessionStateError,
    SessionVersionError,
    UnknownInterruptError,
    UnreadableLogError,
    ValueLimitError,
    WorkflowError,
)
from .events import Answer, ErrorInfo, Event, Interrupt, stored_event
from .execution import SessionRun
from .folded import UNCHECKED_KINDS, FoldedLogs
from .gate import NodeGate
from .limits import check_id, check_input, safe_text
from .memory import InMemoryEventStore
from .model_overrides import MODEL_OVERRIDES
from .outcome import Outcome
from .replay import ReplayIndex
from .replay_check import check_folded
from .store import FINAL_STATUSES, EventStore, SessionInfo
from .values import to_json
from .workflow import Workflow
from .writer import LogWriter, draft

_ANSWER_ATTEMPTS = 20
MAX_REASON_CHARS = 2000  # a cancel's or a retry's reason


def check_reason(reason: str) -> None:
    """Refuse a reason the log should not keep: too long, a NUL, an unpaired surrogate."""
    if len(reason) > MAX_REASON_CHARS:
        raise ValueLimitError(
            f"The reason is {len(reason)} characters long; the limit is {MAX_REASON_CHARS}",
            "The reason",
            "size",
            MAX_REASON_CHARS,
            len(reason),
        )
    check_input(reason, "The reason")


@dataclass(frozen=True, slots=True)
class RunResult:
    """Where a run stands: its status and, by status, its output, interrupts or error."""

    session_id: str
    status: str
    output: Any = None
    interrupts: list[Interrupt] = field(default_factory=list)
    error: str | None = None
    error_type: str | None = None


@dataclass(slots=True)
class _Loaded:
    info: SessionInfo
    index: ReplayIndex
    writer: LogWriter
    events: list[Event] = field(default_factory=list)  # what was read (the whole log unless kept)
    # Every event folded into ``index`` passed the replay check against this runner's workflow;
    # only such an index is kept for the next load (engine.folded).
    checked: bool = False
    kept: bool = False  # ``index`` came from the kept ones: ``events`` holds only what was new


class Runner:
    """Drives runs of ``workflow`` against ``store`` (in memory unless given)."""

    def __init__(
        self,
        workflow: Workflow,
        store: EventStore | None = None,
        gate: NodeGate | None = None,
        folded: FoldedLogs | None = None,
        models: Mapping[str, Any] | None = None,
    ) -> None:
        self.workflow = workflow
        # Agents' models swapped for this runner's turns, by agent name or "*" (engine.model_overrides).
        self.models = dict(models) if models is not None else None
        self.store: EventStore = store if store is not None else InMemoryEventStore()
        self.gate = gate  # a host's drain: see engine.gate
        # Where loads find the index a session's last turn left (engine.folded): a host that
        # makes a runner per turn shares one between them.
        self.folded = folded if folded is not None else FoldedLogs()
        self._root = f"{workflow.name}@1"
        # A store that knows the host's users and groups checks assignees (engine.human).
        self._directory: human.Directory | None = getattr(self.store, "unknown_names", None)
        self._turns: dict[str, asyncio.Task[RunResult]] = {}
        self._cancelled_by: dict[str, tuple[str | None, str | None]] = {}
        self._locks: weakref.WeakValueDictionary[str, asyncio.Lock] = weakref.WeakValueDictionary()

    # -- public API ---------------------------------------------------------------

    async def run(self, node_input: Any = None, session_id: str | None = None) -> RunResult:
        """Start a new session with ``node_input`` and execute it until it waits or ends."""
        loaded = await self._create(node_input, session_id)
        return await self._turn(loaded, node_input)

    async def resume(
        self,
        session_id: str,
        answers: Mapping[str, Any],
        actor: str | None = None,
        *,
        asking: Mapping[str, Asking] | None = None,
    ) -> RunResult:
        """Record ``answers`` and continue; with no answers, retry a failed run. ``asking``: see
        ``answer``."""
        try:
            loaded = await self._load(session_id)
        except UnreadableLogError as error:
            return await self._fail_unreadable(session_id, error)
        self._check_open(loaded)
        if answers:
            await self._record_answers(loaded, answers, actor, asking)
        elif loaded.index.pending and loaded.info.status != "failed":
            raise NoAnswersError(f"Session {session_id!r} is waiting for input: give at least one answer")
        return await self._turn(loaded, loaded.info.input)

    async def answer(
        self,
        session_id: str,
        answers: Mapping[str, Any],
        actor: str | None = None,
        *,
        asking: Mapping[str, Asking] | None = None,
    ) -> None:
        """Validate and record answers without executing anything.

        ``asking`` pins an answer to one asking of its interrupt (by interrupt id): when that
        asking no longer waits (answered, or the id asked again since) or its digest differs,
        nothing is written (``InterruptAlreadyAnswered``, ``AskingClosedError``,
        ``AskingChangedError``). Without a pin an answer goes to the pending asking; either
        way its event records the seq of the asking it answers, which the store checks."""
        try:
            loaded = await self._load(session_id)
        except UnreadableLogError as error:
            failed = await self._fail_unreadable(session_id, error)
            raise SessionStateError(f"Session {session_id!r} is {failed.status}: {failed.error}") from error
        self._check_open(loaded)
        if not answers:
            raise NoAnswersError("answer() needs at least one answer")
        await self._record_answers(loaded, answers, actor, asking)
        self._keep(loaded)

    async def advance(self, session_id: str) -> RunResult:
        """Execute from the log until the run waits, completes or fails."""
        try:
            loaded = await self._load(session_id)
        except UnreadableLogError as error:
            return await self._fail_unreadable(session_id, error)
        self._check_open(loaded)
        return await self._turn(loaded, loaded.info.input)

    async def cancel(self, session_id: str, actor: str | None = None, reason: str | None = None) -> RunResult:
        """Stop a run for good, recording who did and why; a turn in flight in this runner is cancelled."""
        if actor is not None:
            check_id(actor, "The actor's name", caller=True)
        if reason is not None:
            check_reason(reason)
        turn = self._turns.get(session_id)
        if turn is not None:
            self._cancelled_by[session_id] = (actor, reason)
            turn.cancel()
            return await asyncio.shield(turn)
        try:
            loaded = await self._load(session_id)
        except UnreadableLogError:
            loaded = await self._unread(session_id)  # a log that cannot be read can still end
        self._check_open(loaded)
        return await self._finish_cancelled(loaded, actor, reason)

    def failed_nodes(self, events: list[Event]) -> dict[str, Event]:
        """The nodes whose latest attempt failed, with that attempt's ``error`` event."""
        index = ReplayIndex(self._root)
        latest: dict[str, Event] = {}
        for event in events:
            index.apply(event)
            if event.kind == "error":
                latest[event.node_path] = event
        return {path: latest[path] for path in index.failed_paths()}

    async def record_retry(
        self,
        session_id: str,
        node_path: str | None = None,
        node_input: Any = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> None:
        """Record that ``actor`` retries the failed run, executing nothing (``advance`` does).

        ``node_path`` names one failed node (``failed_nodes``); ``node_input`` (with a node,
        not None) is that node's input from then on. Raises ``SessionStateError`` unless the
        run failed, ``NotFailedNodeError`` for a node that did not fail, ``InvalidInputError``
        or ``ValueLimitError`` for an input the node or the log refuses; nothing is written then.
        """
        loaded = await self._load(session_id)
        if loaded.info.status != "failed":
            raise SessionStateError(
                f"Session {session_id!r} is {loaded.info.status}; only a failed run can be retried"
            )
        if actor is not None:
            check_id(actor, "The actor's name", caller=True)
        if reason is not None:
            check_reason(reason)
        fields: dict[str, Any] = {}
        if node_path is not None:
            failed = loaded.index.failed_paths()
            if node_path not in failed:
                raise NotFailedNodeError(session_id, node_path, failed)
            if node_input is not None:
                fields["input"] = self._edited_input(node_path, node_input)
        elif node_input is not None:
            raise InvalidInputError("An edited input needs the failed node it is for")
        if reason:
            fields["message"] = reason
        await loaded.writer.write(draft("retry", node_path or self._root, actor or "user", **fields))
        self._keep(loaded)

    async def retry(
        self,
        session_id: str,
        node_path: str | None = None,
        node_input: Any = None,
        actor: str | None = None,
        reason: str | None = None,
    ) -> RunResult:
        """``record_retry``, then execute: completed nodes replay, the failed ones run again."""
        await self.record_retry(session_id, node_path, node_input, actor, reason)
        return await self.advance(session_id)

    def _edited_input(self, node_path: str, node_input: Any) -> Any:
        """The edited input as the log keeps it, checked against a graph node's input type."""
        try:
            stored = to_json(node_input, "The edited input", caller=True)
        except WorkflowError as error:  # not JSON data (a limit raises ValueLimitError)
            raise InvalidInputError(str(error)) from error
        parts = node_path.split("/")
        node = self.workflow.graph.nodes.get(parts[1].rpartition("@")[0]) if len(parts) == 2 else None
        if node is not None:
            try:
                node.check_input(stored)
            except WorkflowError as error:
                raise InvalidInputError(str(error)) from error
        return stored

    async def result(self, session_id: str) -> RunResult:
        """Where the run stands, read from the log."""
        loaded = await self._load(session_id)
        self._keep(loaded)
        return self._result(session_id, loaded.info.status, loaded.index)

    async def stream(self, node_input: Any = None, session_id: str | None = None) -> AsyncIterator[Event]:
        """Start a run and yield its events as they are committed."""
        loaded = await self._create(node_input, session_id)
        async for event in self._stream(loaded, lambda: self._turn(loaded, node_input)):
            yield event

    async def stream_resume(
        self, session_id: str, answers: Mapping[str, Any], actor: str | None = None
    ) -> AsyncIterator[Event]:
        """Record ``answers``, continue the run and yield its events as they are committed."""
        loaded = await self._load(session_id)
        self._check_open(loaded)

        async def go() -> RunResult:
            if answers:
                await self._record_answers(loaded, answers, actor)
            elif loaded.index.pending and loaded.info.status != "failed":
                raise NoAnswersError(f"Session {session_id!r} is waiting for input: give at least one answer")
            return await self._turn(loaded, loaded.info.input)

        async for event in self._stream(loaded, go):
            yield event

    # -- loading and answering ----------------------------------------------------------

    async def _create(self, node_input: Any, session_id: str | None) -> _Loaded:
        session_id = session_id or uuid.uuid4().hex
        try:
            stored_input = to_json(node_input, "The workflow input", caller=True)
        except WorkflowError as error:
            raise InvalidInputError(str(error)) from error
        await self.store.create_session(
            session_id, self.workflow.name, stored_input, version=self.workflow.version
        )
        info = await self.store.get_session(session_id)
        index = ReplayIndex(self._root)
        return _Loaded(info, index, self._writer(session_id, index))

    async def _load(self, session_id: str) -> _Loaded:
        info = await self.store.get_session(session_id)
        index = self.folded.take(self.workflow, info)
        if index is not None:
            newer = await self.store.list_events(session_id, after_seq=index.last_seq)
            if all(event.kind in UNCHECKED_KINDS for event in newer):
                for event in newer:
                    index.apply(event)
                return _Loaded(info, index, self._writer(session_id, index), newer, checked=True, kept=True)
        return await self._load_all(info)

    async def _load_all(self, info: SessionInfo) -> _Loaded:
        index = ReplayIndex(self._root)
        events = await self.store.list_events(info.session_id)
        for event in events:
            index.apply(event)
        return _Loaded(info, index, self._writer(info.session_id, index), events)

    def _keep(self, loaded: _Loaded, status: str | None = None) -> None:
        """Keep the index of an operation that ended for the session's next load; an ended run's
        goes (nothing continues it)."""
        if not loaded.checked or (status or loaded.info.status) in ("completed", "cancelled"):
            self.folded.drop(loaded.info.session_id)
        else:
            self.folded.keep(self.workflow, loaded.info, loaded.index)

    async def _unread(self, session_id: str) -> _Loaded:
        """A session loaded without its events: enough to append after them."""
        info = await self.store.get_session(session_id)
        index = ReplayIndex(self._root)
        index.last_seq = info.last_seq
        return _Loaded(info, index, self._writer(session_id, index))

    async def _fail_unreadable(self, session_id: str, error: UnreadableLogError) -> RunResult:
        """Fail a run whose log cannot be read, visibly: a failed status naming the reason.

        Retrying it does the same again; it is never left waiting or retried by itself.
        """
        loaded = await self._unread(session_id)
        self._check_open(loaded)
        info = ErrorInfo(type=type(error).__name__, message=safe_text(str(error)))
        await loaded.writer.write(
            draft("status", self._root, self.workflow.name, status="failed", error=info)
        )
        loaded.writer.seal()
        await self.store.set_status(session_id, "failed")
        return RunResult(session_id, "failed", error=info.message, error_type=info.type)

    def _writer(self, session_id: str, index: ReplayIndex) -> LogWriter:
        return LogWriter(self.store, session_id, uuid.uuid4().hex, index)

    @staticmethod
    def _check_open(loaded: _Loaded) -> None:
        status = loaded.info.status
        if status in FINAL_STATUSES:
            raise SessionStateError(f"Session {loaded.info.session_id!r} is {status}; it cannot continue")

    async def _record_answers(
        self,
        loaded: _Loaded,
        answers: Mapping[str, Any],
        actor: str | None,
        asking: Mapping[str, Asking] | None = None,
    ) -> None:
        await self._record(loaded, lambda: self._answer_drafts(loaded, answers, actor, asking or {}))

    async def _record(self, loaded: _Loaded, build: Callable[[], list[dict[str, Any]]]) -> list[Event]:
        """Append what ``build`` checks and drafts against the log as it is now; return it."""
        for _ in range(_ANSWER_ATTEMPTS):
            drafts = build()
            if not drafts:
                return []
            loaded.writer.absorbs = False  # what others append meanwhile is checked again
            try:
                await loaded.writer.write(*drafts)
                return [stored_event(item) for item in drafts]
            except ConcurrencyError:
                # A turn in flight moved the log on while we checked: read on and check again.
                await self._catch_up(loaded)
            finally:
                loaded.writer.absorbs = True
        raise ConcurrencyError(loaded.info.session_id, loaded.index.last_seq, -1)

    async def _catch_up(self, loaded: _Loaded) -> None:
        """Fold what others appended since ``loaded`` was read; start a fresh writer."""
        session_id = loaded.info.session_id
        newer = await self.store.list_events(session_id, after_seq=loaded.index.last_seq)
        if any(event.kind not in UNCHECKED_KINDS for event in newer):
            loaded.checked = False  # a turn elsewhere ran nodes: check the log again before going on
            if loaded.kept:  # only the log's tail was read: read it all
                fresh = await self._load_all(loaded.info)
                loaded.index, loaded.events, loaded.kept = fresh.index, fresh.events, False
                loaded.writer = fresh.writer
                return
        for event in newer:
            loaded.index.apply(event)
            loaded.events.append(event)
        loaded.writer = self._writer(session_id, loaded.index)

    def _answer_drafts(
        self, loaded: _Loaded, answers: Mapping[str, Any], actor: str | None, asking: Mapping[str, Asking]
    ) -> list[dict[str, Any]]:
        """Check every answer (pending, storable, valid) and build its event; raise caller errors."""
        index, session_id = loaded.index, loaded.info.session_id
        if actor is not None:
            check_id(actor, "The actor's name", caller=True)
        for interrupt_id in answers:
            if interrupt_id in asking:
                check_asking(index, interrupt_id, asking[interrupt_id])
            if interrupt_id in index.pending:
                continue
            first = index.answered.get(interrupt_id)
            if first is not None:
                raise InterruptAlreadyAnswered(interrupt_id, first.author, first.timestamp)
            raise UnknownInterruptError(session_id, [interrupt_id])
        drafts = []
        for interrupt_id, value in answers.items():
            interrupt = index.pending[interrupt_id]
            try:
                stored = to_json(value, "The answer", caller=True)
            except WorkflowError as error:
                raise InvalidAnswerError(interrupt_id, {"": [str(error)]}) from error
            check_answer(interrupt_id, interrupt.response_schema, stored)
            if interrupt.human is not None:
                human.check_answer_by(index.people, interrupt_id, interrupt.human, actor)
            pin = asking.get(interrupt_id)
            answer = Answer(
                interrupt_id=interrupt_id,
                value=stored,
                actor=actor,
                request_seq=index.asked_at.get(interrupt_id),
                digest=pin.digest if pin is not None else None,
            )
            drafts.append(draft("answer", interrupt.node_path, actor or "user", answer=answer))
        return drafts

    # -- human steps (engine.human) -----------------------------------------------------

    async def decide(
        self,
        session_id: str,
        interrupt_id: str,
        decision: str,
        actor: str,
        users: list[str] | None = None,
        *,
        force: bool = False,
        request_seq: int | None = None,
    ) -> Event:
        """Record a person's ``claim``, ``unclaim`` or ``reassign`` (to ``users``) of a pending
        question; raises ``InterruptClaimedError`` or ``DecisionError`` and writes nothing.
        ``force``: an unclaim of someone else's claim (an admin's). ``request_seq`` pins the
        decision to that asking (``AskingClosedError`` once it no longer waits); its event
        names the asking it decides on."""
        loaded = await self._load(session_id)
        self._check_open(loaded)
        check_id(actor, "The actor's name", caller=True)

        def build() -> list[dict[str, Any]]:
            interrupt = loaded.index.pending.get(interrupt_id)
            asked_at = loaded.index.asked_at.get(interrupt_id)
            if request_seq is not None and (interrupt is None or asked_at != request_seq):
                raise AskingClosedError(
                    interrupt_id, request_seq, asked_at if interrupt is not None else None
                )
            if interrupt is None:
                raise UnknownInterruptError(session_id, [interrupt_id])
            data = human.decision_data(loaded.index.people, interrupt_id, decision, actor, users, force)
            data["request_seq"] = asked_at
            return [draft("assignment", interrupt.node_path, actor, assignment=data)]

        [event] = await self._record(loaded, build)
        self._keep(loaded)
        return event

    async def fire_timers(self, session_id: str, now: float | None = None) -> list[Event]:
        """Record what the clock decides by ``now`` (epoch seconds; default: now) on the run's
        pending questions: reminders, escalations, and default answers (or time-outs) by the
        actor ``deadline``. Returns the events written (none when nothing is due, or when
        another process recorded them first). Call ``advance`` after an answer to go on."""
        loaded = await self._load(session_id)
        if loaded.info.status in FINAL_STATUSES:
            return []
        moment = time.time() if now is None else now

        def build() -> list[dict[str, Any]]:
            drafts = []
            for interrupt_id, data, value, timed_out in human.due_decisions(
                loaded.index.people, loaded.index.pending, moment
            ):
                path = loaded.index.pending[interrupt_id].node_path
                if data is not None:
                    drafts.append(draft("assignment", path, human.DEADLINE_ACTOR, assignment=data))
                else:
                    answer = Answer(
                        interrupt_id=interrupt_id,
                        value=value,
                        actor=human.DEADLINE_ACTOR,
                        timed_out=timed_out,
                        request_seq=loaded.index.asked_at.get(interrupt_id),
                    )
                    drafts.append(draft("answer", path, human.DEADLINE_ACTOR, answer=answer))
            return drafts

        written = await self._record(loaded, build)
        self._keep(loaded)
        return written

    # -- executing ------------------------------------------------------------------

    async def _turn(self, loaded: _Loaded, node_input: Any) -> RunResult:
        session_id = loaded.info.session_id
        recorded = loaded.info.version
        if recorded is not None and recorded != self.workflow.version:
            raise SessionVersionError(session_id, recorded, self.workflow.version)
        lock = self._locks.get(session_id)
        if lock is None:
            lock = self._locks[session_id] = asyncio.Lock()
        waited = lock.locked()
        async with lock:  # one turn per session at a time in this runner
            if waited:
                await self._catch_up(loaded)  # the turn we waited for wrote events
                if loaded.index.status in FINAL_STATUSES:
                    return self._result(session_id, loaded.index.status, loaded.index)
            # Eager: a turn that never waits (in memory, say) ends right here, without trips
            # through the event loop; one that waits goes on as the task cancel() can reach.
            swapped = MODEL_OVERRIDES.set(self.models) if self.models is not None else None
            try:  # the task keeps a copy of the context it starts in
                task = asyncio.Task(
                    self._execute(loaded, node_input), loop=asyncio.get_running_loop(), eager_start=True
                )
            finally:
                if swapped is not None:
                    MODEL_OVERRIDES.reset(swapped)
            self._turns[session_id] = task
            try:
                result = await asyncio.shield(task)
            finally:
                if task.done():
                    self._turns.pop(session_id, None)
            self._keep(loaded, result.status)
            return result

    async def _execute(self, loaded: _Loaded, node_input: Any) -> RunResult:
        session_id, index, writer = loaded.info.session_id, loaded.index, loaded.writer
        if not loaded.checked:
            if loaded.events:
                report = check_folded(self.workflow, loaded.events, index)
                if not report.replays:
                    return await self._refuse_divergent(loaded, str(report))
            loaded.checked = True
        root = self._root
        finished = index.records.get(root)
        if finished is not None and finished.done and not index.pending:
            # The last turn stopped between the workflow's completion and its status (a worker
            # killed there): record the status alone; the workflow does not complete twice.
            output = self.workflow.restore_output(finished.output)
            outcome = Outcome("completed", output, output_seq=finished.output_seq)
            return await self._finish(loaded, SessionRun(session_id, index, writer), outcome)
        await self.store.set_status(session_id, "running")
        try:
            while True:
                writer.absorbed_answers = 0
                run = SessionRun(session_id, index, writer, self.gate, self._directory)
                outcome = await run.execute(self.workflow, node_input, root, [root], self.workflow.name)
                await writer.close()
                if outcome.status != "waiting":
                    break
                if not writer.absorbed_answers:
                    await writer.write(draft("status", root, self.workflow.name, status="waiting"))
                    if not writer.absorbed_answers:
                        break
                # Answers arrived while this turn ran (or just before its status): take them
                # up in the same call.
        except asyncio.CancelledError:
            await writer.close()
            if session_id not in self._cancelled_by:
                raise  # the host stopped (shutdown, a worker cut): the run stays running, to resume
            return await self._finish_cancelled(loaded, *self._cancelled_by.pop(session_id))
        return await self._finish(loaded, run, outcome)

    async def _finish(self, loaded: _Loaded, run: SessionRun, outcome: Outcome) -> RunResult:
        session_id, index, writer = loaded.info.session_id, loaded.index, loaded.writer
        author = self.workflow.name
        if outcome.status == "completed":
            # The output is in the log once, in the event that produced it: point at it.
            fields: dict[str, Any] = {"output_seq": outcome.output_seq}
            if outcome.output is not None and not outcome.output_seq:
                fields = {"output": to_json(outcome.output, "The workflow output")}  # never lose it
            elif outcome.output is None:
                fields = {}
            await writer.write(draft("status", self._root, author, status="completed", **fields))
        elif outcome.status == "waiting":
            pass  # written by _execute, which goes on when an answer slipped in before it
        else:
            error = outcome.error
            assert error is not None
            where = run.failure_path(error) or self._root
            info = ErrorInfo(type=type(error).__name__, message=safe_text(f"Node {where} failed: {error}"))
            await writer.write(draft("status", self._root, author, status="failed", error=info))
        writer.seal()
        await self.store.set_status(session_id, outcome.status)
        result = self._result(session_id, outcome.status, index)
        if outcome.status == "completed":
            return RunResult(session_id, "completed", outcome.output)
        return result

    async def _refuse_divergent(self, loaded: _Loaded, divergence: str) -> RunResult:
        """Fail the run before executing anything: its log no longer replays on this code."""
        session_id = loaded.info.session_id
        message = f"The log of run {session_id} no longer replays on this code, so nothing ran: {divergence}"
        info = ErrorInfo(type=ReplayDivergenceError.__name__, message=message)
        await loaded.writer.write(
            draft("status", self._root, self.workflow.name, status="failed", error=info)
        )
        loaded.writer.seal()
        await self.store.set_status(session_id, "failed")
        return RunResult(session_id, "failed", error=message, error_type=info.type)

    async def _finish_cancelled(
        self, loaded: _Loaded, actor: str | None, reason: str | None = None
    ) -> RunResult:
        session_id = loaded.info.session_id
        fields = {"message": reason} if reason else {}
        await loaded.writer.write(draft("status", self._root, actor or "user", status="cancelled", **fields))
        loaded.writer.seal()
        await self.store.set_status(session_id, "cancelled")
        return RunResult(session_id, "cancelled")

    def _result(self, session_id: str, status: str, index: ReplayIndex) -> RunResult:
        if status == "completed":
            return RunResult(session_id, status, index.output)
        if status == "waiting":
            return RunResult(session_id, status, interrupts=list(index.pending.values()))
        if status == "failed" and index.error is not None:
            return RunResult(session_id, status, error=index.error.message, error_type=index.error.type)
        return RunResult(session_id, status)

    async def _stream(self, loaded: _Loaded, go: Callable[[], Awaitable[RunResult]]) -> AsyncIterator[Event]:
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        loaded.writer.listeners.append(queue.put_nowait)
        task = asyncio.ensure_future(go())
        task.add_done_callback(lambda _: queue.put_nowait(None))
        try:
            while (event := await queue.get()) is not None:
                yield event
            task.result()
        finally:
            if not task.done():
                task.cancel()
