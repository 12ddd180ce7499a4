"""An event store that keeps logs in memory, for tests and single-process use."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from .errors import (
    AskingClosedError,
    ConcurrencyError,
    InterruptAlreadyAnswered,
    SessionExistsError,
    UnknownInterruptError,
    UnknownSessionError,
)
from .events import Event, Interrupt
from .human import HumanPolicy, fold_answer
from .store import STATUSES, SessionInfo


def _track_pending(
    pending: dict[str, _Asked],
    answered: dict[str, Event],
    earlier: dict[str, Event],
    session_id: str,
    event: Event,
) -> None:
    """Follow which interrupts are pending; refuse an answer to one that is not."""
    kind = event.kind
    if kind == "interrupt" and event.interrupt is not None:
        asked = pending.get(event.interrupt.id)
        if asked is None or asked[0] != event.node_path or not event.interrupt.states_again(asked[4]):
            pending[event.interrupt.id] = (
                event.node_path,
                event.interrupt.human,
                [],
                event.seq,
                event.interrupt,
            )
        # (else stated again: the same asking, whose approvals so far stand)
    elif kind == "answer" and event.answer is not None:
        answer = event.answer
        interrupt_id = answer.interrupt_id
        if interrupt_id not in pending:
            first = answered.get(interrupt_id) or earlier.get(interrupt_id)
            if first is None:
                raise UnknownInterruptError(session_id, [interrupt_id])
            raise InterruptAlreadyAnswered(interrupt_id, first.author, first.timestamp)
        path, policy, given, asked_at, asking = pending[interrupt_id]
        if answer.request_seq is not None and answer.request_seq != asked_at:
            raise AskingClosedError(interrupt_id, answer.request_seq, asked_at)
        if policy is not None and policy.quorum:  # an approval short of the quorum: still pending
            actor = answer.actor or event.author
            resolved, folded = fold_answer(policy, given, actor, answer.value, answer.timed_out)
            if not resolved:
                pending[interrupt_id] = (path, policy, folded, asked_at, asking)
                return
        del pending[interrupt_id]
        answered[interrupt_id] = event
    elif kind in ("error", "completed") and pending:
        # A failed or finished execution withdraws the questions it asked itself.
        for interrupt_id in [i for i, asked in pending.items() if asked[0] == event.node_path]:
            del pending[interrupt_id]


_ASKS = frozenset({"interrupt", "answer"})
_ASKS_AND_ENDS = _ASKS | {"error", "completed"}  # an end withdraws what the execution asked


# A pending question: the path that asked, its human-step policy, the approvals given so far, the
# seq of its asking.
_Asked = tuple[str, HumanPolicy | None, list[dict[str, Any]], int, Interrupt]


class _Log:
    __slots__ = (
        "answered",
        "created_at",
        "events",
        "input",
        "pending",
        "status",
        "updated_at",
        "version",
        "workflow",
    )

    def __init__(self, workflow: str, node_input: Any, version: str | None = None) -> None:
        self.workflow = workflow
        self.version = version
        self.input = node_input
        self.status = "running"
        self.events: list[Event] = []
        self.created_at = self.updated_at = time.time()
        self.pending: dict[str, _Asked] = {}  # interrupt id -> the path that asked, ...
        self.answered: dict[str, Event] = {}


class InMemoryEventStore:
    """Keeps every session's events in a list; appends are atomic within one event loop."""

    def __init__(self) -> None:
        self._logs: dict[str, _Log] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "append" in cls.__dict__ and "append_nowait" not in cls.__dict__:
            # A subclass that changes append (a test that races it, say) is appended through it.
            setattr(cls, "append_nowait", None)  # noqa: B010

    def _log(self, session_id: str) -> _Log:
        try:
            return self._logs[session_id]
        except KeyError:
            raise UnknownSessionError(session_id) from None

    async def create_session(
        self, session_id: str, workflow: str, node_input: Any, *, version: str | None = None
    ) -> None:
        if session_id in self._logs:
            raise SessionExistsError(session_id)
        self._logs[session_id] = _Log(workflow, node_input, version)

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        return self._append(session_id, events, expected_seq)

    def _append(self, session_id: str, events: Sequence[Event], expected_seq: int) -> int:
        """The append itself, for a subclass that changes ``append`` (its ``append_nowait`` is None)."""
        return InMemoryEventStore.append_nowait(self, session_id, events, expected_seq=expected_seq)

    def append_nowait(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        """``append`` without a coroutine: it never waits, so the engine's writer calls it directly."""
        log = self._logs.get(session_id) or self._log(session_id)
        last = len(log.events)
        if last != expected_seq:
            raise ConcurrencyError(session_id, expected_seq, last)
        seq = last
        tracked = False
        watched = _ASKS_AND_ENDS if log.pending else _ASKS  # an end withdraws what was asked
        for event in events:
            seq += 1
            if event.seq != seq:
                raise ValueError(f"event seq {event.seq} should be {seq}")
            if event.kind in watched:
                tracked = True
        if tracked:
            pending = dict(log.pending)  # applied only once every event passed
            answered: dict[str, Event] = {}
            for event in events:
                _track_pending(pending, answered, log.answered, session_id, event)
            log.pending = pending
            log.answered.update(answered)
        log.events.extend(events)
        log.updated_at = time.time()
        return seq

    async def list_events(self, session_id: str, after_seq: int = 0) -> list[Event]:
        return self._log(session_id).events[after_seq:]

    async def get_session(self, session_id: str) -> SessionInfo:
        log = self._log(session_id)
        return SessionInfo(
            session_id=session_id,
            workflow=log.workflow,
            status=log.status,
            last_seq=len(log.events),
            input=log.input,
            created_at=log.created_at,
            updated_at=log.updated_at,
            version=log.version,
        )

    async def set_status(self, session_id: str, status: str) -> None:
        if status not in STATUSES:
            raise ValueError(f"unknown status {status!r}; expected one of {STATUSES}")
        log = self._log(session_id)
        log.status = status
        log.updated_at = time.time()

    def dump(self, session_id: str) -> dict[str, Any]:
        """Return a session as JSON-ready data (its record and every event)."""
        log = self._log(session_id)
        return {
            "session_id": session_id,
            "workflow": log.workflow,
            "version": log.version,
            "status": log.status,
            "input": log.input,
            "events": [event.model_dump(mode="json") for event in log.events],
        }

    @classmethod
    def load(cls, *sessions: dict[str, Any]) -> InMemoryEventStore:
        """Build a store from ``dump`` output, as a process that reads a saved log would."""
        store = cls()
        for data in sessions:
            log = _Log(data["workflow"], data["input"], data.get("version"))
            log.status = data["status"]
            for raw in data["events"]:
                event = Event.model_validate(raw)
                log.events.append(event)
                _track_pending(log.pending, log.answered, {}, data["session_id"], event)
            store._logs[data["session_id"]] = log
        return store
