"""Folding a session's log into what replay needs, and deciding what each node does.

Pure code, no asyncio: ``ReplayIndex.apply`` folds one stored event; ``decide`` says
whether a node at a path runs fresh, runs again, fast-forwards or keeps waiting
(seed 000's interception rules, cases 2-7; case 1, same-turn dedup, lives in the
executor).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .events import Answer, ErrorInfo, Event, Interrupt
from .human import Ledger


class NodeRecord:
    """What the log says about one node path."""

    __slots__ = (
        "answered_at",
        "done",
        "edited_input",
        "error",
        "failed_below",
        "has_output",
        "output",
        "output_seq",
        "pending",
        "resolved",
        "route",
        "seen_up_to",
        "seq",
        "started",
    )

    def __init__(self) -> None:
        self.started = False
        self.done = False
        self.has_output = False
        self.output: Any = None
        self.output_seq = 0  # the event that carries the output
        self.route: Any = None
        self.error: ErrorInfo | None = None
        # Most paths never see a question or a failure: these share one empty value until
        # the first write (see ask/answer/withdraw/mark_failed), to keep replay allocations low.
        self.pending: dict[str, Interrupt] = _NO_QUESTIONS
        self.resolved: dict[str, Any] = _NO_ANSWERS
        self.answered_at = 0  # seq of the latest answer to a question at or below this path
        self.seen_up_to = 0  # the log position the latest execution's decision was based on
        self.failed_below: frozenset[str] | set[str] = frozenset()
        self.seq = 0  # where the execution completed in the log
        self.edited_input: Any = None  # the input an operator's retry gave this path, if any

    def ask(self, interrupt: Interrupt) -> None:
        if self.pending is _NO_QUESTIONS:
            self.pending = {}
        self.pending[interrupt.id] = interrupt
        if interrupt.id in self.resolved:
            del self.resolved[interrupt.id]

    def answer(self, interrupt_id: str, value: Any, seq: int) -> None:
        if interrupt_id in self.pending:
            del self.pending[interrupt_id]
        if self.resolved is _NO_ANSWERS:
            self.resolved = {}
        self.resolved[interrupt_id] = value
        self.answered_at = seq

    def withdraw(self, interrupt_id: str) -> None:
        if interrupt_id in self.pending:
            del self.pending[interrupt_id]

    def mark_failed(self, path: str, failed: bool) -> None:
        if failed:
            if not isinstance(self.failed_below, set):
                self.failed_below = set()
            self.failed_below.add(path)
        elif path in self.failed_below:
            assert isinstance(self.failed_below, set)
            self.failed_below.discard(path)

    def forget_outcome(self) -> None:
        self.output = self.route = None
        self.has_output = False
        self.output_seq = 0


_NO_QUESTIONS: dict[str, Interrupt] = {}
_NO_ANSWERS: dict[str, Any] = {}


def ancestors(path: str) -> list[str]:
    """``a@1/b@1/c@1`` -> ``[a@1, a@1/b@1, a@1/b@1/c@1]``."""
    parts = path.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]


@dataclass
class ReplayIndex:
    """A session's log folded into per-path records, pending interrupts and state."""

    root_path: str
    records: dict[str, NodeRecord] = field(default_factory=dict)
    pending: dict[str, Interrupt] = field(default_factory=dict)
    answered: dict[str, Event] = field(default_factory=dict)
    asked_at: dict[str, int] = field(default_factory=dict)  # interrupt id -> seq of its latest asking
    state: dict[str, Any] = field(default_factory=dict)
    last_seq: int = 0
    status: str | None = None
    error: ErrorInfo | None = None
    output: Any = None
    # seq -> output of the events that carry the workflow's own output (usually one a run)
    root_outputs: dict[int, Any] = field(default_factory=dict)
    people: Ledger = field(default_factory=Ledger)  # claims, escalations, approvals so far
    # path -> (digest of the input its latest questions were asked on, their ids): engine.asking
    asked_on: dict[str, tuple[str, list[str]]] = field(default_factory=dict)

    def failed_paths(self) -> list[str]:
        """The paths whose latest attempt failed (an ``error`` not followed by a new start)."""
        return [path for path, record in self.records.items() if record.error is not None]

    def record(self, path: str) -> NodeRecord:
        record = self.records.get(path)
        if record is None:
            record = self.records[path] = NodeRecord()
        return record

    def apply(self, event: Event) -> None:
        """Fold one stored event."""
        self.last_seq = event.seq
        if event.state:
            self.state.update(event.state)
        kind = event.kind
        if kind == "started":
            path = event.node_path
            record = self.records.get(path)
            if record is None:
                record = self.records[path] = NodeRecord()  # fresh: nothing to forget
            else:
                if record.error is not None:
                    self._mark_failed(path, False)
                    record.error = None
                record.done = False
                record.forget_outcome()
            record.started = True
            record.seen_up_to = event.seen_seq if event.seen_seq is not None else event.seq
        elif kind in _OUTCOMES:
            self._apply_outcome(event)
        elif kind == "interrupt" and event.interrupt is not None:
            stated = self.pending.get(event.interrupt.id)
            if stated is None or not event.interrupt.states_again(stated):
                self.asked_at[event.interrupt.id] = event.seq  # (stated again: the same asking)
            if type(event.input) is str:
                self._asked_on(event.interrupt, event.input)
            self._apply_interrupt(event.interrupt)
        elif kind == "answer" and event.answer is not None:
            self._apply_answer(event, event.answer)
        elif kind == "assignment" and event.assignment is not None:
            self.people.apply(event.assignment)
        elif kind == "error":
            record = self.record(event.node_path)
            record.error = event.error
            record.forget_outcome()  # a failed attempt's output and route do not count
            self._withdraw(event.node_path, record)
            self._mark_failed(event.node_path, True)
            if self.people.timed_out:
                self.people.failed(event.node_path)
        elif kind == "retry":
            if event.input is not None:
                self.record(event.node_path).edited_input = event.input
        elif kind == "status":
            self.status = event.status
            self.error = event.error if event.status == "failed" else None
            if event.status == "completed":
                # The status points at the event carrying the output (logs written before it
                # did carry the output themselves).
                self.output = (
                    event.output if event.output is not None else self.root_outputs.get(event.output_seq or 0)
                )

    def _apply_outcome(self, event: Event) -> None:
        own_path = event.node_path
        own = self.records.get(own_path)
        if own is None:  # (``record``'s work, without a second look-up on every node's path)
            own = self.records[own_path] = NodeRecord()
        output = event.output
        if output is not None:
            seq = event.seq
            for path in event.output_for or (own_path,):
                record = own if path == own_path else self.record(path)
                record.output = output
                record.has_output = True
                record.output_seq = seq
                if path == self.root_path:
                    self.root_outputs[seq] = output
        if event.route is not None:
            own.route = event.route
        if event.kind == "completed":
            record = own
            if record.error is not None:
                self._mark_failed(event.node_path, False)
            record.done = True
            record.error = None
            record.seq = event.seq
            if record.pending:
                self._withdraw(event.node_path, record)

    def _withdraw(self, path: str, record: NodeRecord) -> None:
        """Drop the questions a failed or finished execution at ``path`` had asked itself."""
        asked = [i for i, interrupt in record.pending.items() if interrupt.node_path == path]
        for interrupt_id in asked:
            self.pending.pop(interrupt_id, None)
            for prefix in ancestors(path):
                self.record(prefix).withdraw(interrupt_id)

    def _mark_failed(self, path: str, failed: bool) -> None:
        """Tell the ancestors of ``path`` that a descendant failed, or no longer has."""
        for prefix in ancestors(path)[:-1]:
            self.record(prefix).mark_failed(path, failed)

    def _asked_on(self, interrupt: Interrupt, digest: str) -> None:
        """Note what a question was asked on; a question asked on another input than the path's
        earlier ones makes their answers stale (they were given to other questions)."""
        path = interrupt.node_path
        seen = self.asked_on.get(path)
        if seen is not None and seen[0] == digest:
            if interrupt.id not in seen[1]:
                seen[1].append(interrupt.id)
            return
        if seen is not None:
            for prefix in ancestors(path):
                record = self.records.get(prefix)
                if record is not None and record.resolved:
                    for interrupt_id in seen[1]:
                        record.resolved.pop(interrupt_id, None)
        self.asked_on[path] = (digest, [interrupt.id])

    def _apply_interrupt(self, interrupt: Interrupt) -> None:
        again = self.pending.get(interrupt.id)
        self.pending[interrupt.id] = interrupt
        if interrupt.human is not None and (again is None or again.node_path != interrupt.node_path):
            self.people.asked(interrupt.id)  # a new question (one stated again keeps its claims)
        for path in ancestors(interrupt.node_path):
            self.record(path).ask(interrupt)

    def _apply_answer(self, event: Event, answer: Answer) -> None:
        value = answer.value
        interrupt = self.pending.get(answer.interrupt_id)
        if interrupt is not None and interrupt.human is not None:
            # Human steps: an approval short of its quorum leaves the question pending;
            # a deadline without a default resolves it as timed out (engine.human).
            actor = answer.actor or event.author
            resolved, value = self.people.answer(
                interrupt.id, interrupt.node_path, interrupt.human, actor, value, answer.timed_out
            )
            if not resolved:
                return
        self.pending.pop(answer.interrupt_id, None)
        self.answered[answer.interrupt_id] = event
        path = interrupt.node_path if interrupt is not None else event.node_path
        for prefix in ancestors(path):
            self.record(prefix).answer(answer.interrupt_id, value, event.seq)


_OUTCOMES = frozenset({"completed", "output", "route", "state"})


class Action(Enum):
    FRESH = "fresh"  # nothing recorded: run
    RERUN = "rerun"  # run again with the recorded answers as resume_inputs
    FORWARD = "forward"  # completed before: reuse the recorded output and route
    WAIT = "wait"  # interrupts still unanswered: do not run
    ANSWER = "answer"  # rerun_on_resume=False and all answered: the answers are the output


def decide(record: NodeRecord | None, *, rerun_on_resume: bool, is_workflow: bool) -> Action:
    """Decide what a node at a recorded path does this turn."""
    if record is None:
        return Action.FRESH
    if is_workflow:
        return Action.RERUN
    if record.pending:
        if rerun_on_resume and (record.answered_at > record.seen_up_to or record.failed_below):
            return Action.RERUN  # an answer or a failure below it needs this node to run again
        return Action.WAIT
    if record.done:
        return Action.FORWARD
    if record.error is not None:
        return Action.RERUN
    if record.resolved:
        return Action.RERUN if rerun_on_resume else Action.ANSWER
    if record.started:
        return Action.RERUN  # it was in flight when the process stopped
    return Action.FRESH


def answers_as_output(record: NodeRecord) -> Any:
    """The output of a ``rerun_on_resume=False`` node whose interrupts are all answered."""
    if len(record.resolved) == 1:
        return next(iter(record.resolved.values()))
    return dict(record.resolved)


def forwarded_output(record: NodeRecord, rerun_on_resume: bool) -> Any:
    """The output a completed node fast-forwards with: the recorded one, or for a
    ``rerun_on_resume=False`` node that completed with its answers as output without
    writing them (as ADK, it writes no output event of its own), those answers."""
    if record.has_output or rerun_on_resume or not record.resolved:
        return record.output
    return answers_as_output(record)
