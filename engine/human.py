"""Human steps: who may answer a question, by when, what happens then, and quorums.

A ``RequestInput`` may declare assignees, a deadline with a default answer (or
``TIMEOUT_FAIL``), a reminder, an escalation and a quorum of approvals. What it declares is
stored on the question as a ``HumanPolicy`` with absolute times (epoch seconds) fixed when it
is asked, so replay and every process see the same deadline. Who did what on a pending
question (claims, escalations, reminders, each approval) is an ``assignment`` or ``answer``
event in the run's log; ``Ledger`` folds them. Engine code only: who a user or a group is,
is the host's business (wfapp checks names when a question is asked and who may answer).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field

from .answers import field_errors
from .errors import ConfigurationError, DecisionError, InterruptClaimedError, WorkflowError
from .strict import StrictModel
from .values import to_json

if TYPE_CHECKING:
    from .events import RequestInput
    from .replay import NodeRecord

# A host's check of user and group names: the names it does not know. An event store that has
# one as ``unknown_names`` (wfapp's) gets every question's assignees checked when it is asked.
Directory = Callable[[list[str]], Awaitable[list[str]]]

DEADLINE_ACTOR = "deadline"  # who a default answer is recorded by
GROUP_PREFIX = "group:"


class _TimeoutFail:
    """``on_timeout=TIMEOUT_FAIL``: the node fails with ``InterruptTimeoutError`` at the deadline."""

    _instance: _TimeoutFail | None = None

    def __new__(cls) -> _TimeoutFail:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "TIMEOUT_FAIL"


TIMEOUT_FAIL = _TimeoutFail()


class TimedOut:
    """What a question that ran out of time with ``TIMEOUT_FAIL`` resolves to in the replay index."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TIMED_OUT"


TIMED_OUT = TimedOut()


class HumanPolicy(StrictModel):
    """What a question declares about the people answering it, as stored on the ``Interrupt``.

    Times are epoch seconds fixed when the question is asked; ``on_timeout`` is ``"answer"``
    (record ``default_answer`` by the actor ``deadline``), ``"fail"`` or None (no deadline).
    """

    model_config = ConfigDict(frozen=True)

    assignees: list[str] = Field(default_factory=list)
    asked_at: float = 0.0
    due_at: float | None = None
    on_timeout: Literal["answer", "fail"] | None = None
    default_answer: Any = None
    remind_at: float | None = None
    escalate_at: float | None = None
    escalate_to: list[str] = Field(default_factory=list)
    approvals_required: int = 1
    # Whether the run's requester is kept from answering; None: the default, which keeps them
    # from answering an approval question (``approval_question``) unless the application says not.
    exclude_requester: bool | None = None

    @property
    def quorum(self) -> bool:
        return self.approvals_required > 1


def _seconds(value: timedelta | None, what: str) -> float | None:
    if value is None:
        return None
    if not isinstance(value, timedelta):
        raise ConfigurationError(f"RequestInput {what}= must be a timedelta, not {type(value).__name__}")
    seconds = value.total_seconds()
    if seconds <= 0:
        raise ConfigurationError(f"RequestInput {what}= must be positive, not {value}")
    return seconds


def _names(value: Any, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ConfigurationError(f"RequestInput {what}= must be a list of names, not {value!r}")
    names = []
    for name in value:
        if not isinstance(name, str) or not name.strip() or name.strip() == GROUP_PREFIX.rstrip(":"):
            raise ConfigurationError(
                f"RequestInput {what}= holds {name!r}, which is not a user or group name"
            )
        if name.startswith(GROUP_PREFIX) and not name[len(GROUP_PREFIX) :].strip():
            raise ConfigurationError(f"RequestInput {what}= holds {name!r}: a group name follows 'group:'")
        names.append(name.strip())
    return names


@dataclass(frozen=True, slots=True)
class Declared:
    """A ``RequestInput``'s human-step fields, checked; ``policy()`` fixes the times."""

    assignees: list[str]
    timeout: float | None
    deadline: float | None
    on_timeout: Literal["answer", "fail"] | None
    default_answer: Any
    remind_after: float | None
    escalate_after: float | None
    escalate_to: list[str]
    approvals_required: int
    exclude_requester: bool | None

    def policy(self, now: float | None = None) -> HumanPolicy | None:
        """The stored policy of a question asked at ``now``; None when nothing is declared."""
        if self == _NOTHING:
            return None
        now = time.time() if now is None else now
        due = self.deadline if self.deadline is not None else (now + self.timeout if self.timeout else None)
        return HumanPolicy(
            assignees=self.assignees,
            asked_at=now,
            due_at=due,
            on_timeout=self.on_timeout if due is not None else None,
            default_answer=self.default_answer,
            remind_at=now + self.remind_after if self.remind_after else None,
            escalate_at=now + self.escalate_after if self.escalate_after else None,
            escalate_to=self.escalate_to,
            approvals_required=self.approvals_required,
            exclude_requester=self.exclude_requester,
        )


_NOTHING = Declared([], None, None, None, None, None, None, [], 1, None)


def declare(fields: dict[str, Any], schema: dict[str, Any] | None) -> Declared:
    """Check a ``RequestInput``'s human-step fields (``schema``: its JSON response schema).

    Raises ``ConfigurationError`` naming the field: inside a node, that fails the node.
    """
    timeout = _seconds(fields.get("timeout"), "timeout")
    deadline_at = fields.get("deadline")
    deadline: float | None = None
    if deadline_at is not None:
        if not isinstance(deadline_at, datetime) or deadline_at.utcoffset() is None:
            raise ConfigurationError("RequestInput deadline= must be an aware datetime (with a time zone)")
        if timeout is not None:
            raise ConfigurationError("RequestInput takes timeout= or deadline=, not both")
        deadline = deadline_at.timestamp()
    on_timeout = fields.get("on_timeout")
    timed = timeout is not None or deadline is not None
    if on_timeout is not None and not timed:
        raise ConfigurationError("RequestInput on_timeout= needs timeout= or deadline=")
    mode: Literal["answer", "fail"] | None = None
    default: Any = None
    if timed:
        mode = "fail" if on_timeout is None or on_timeout is TIMEOUT_FAIL else "answer"
        if mode == "answer":
            default = _json(on_timeout)
            if schema is not None:
                errors = field_errors(schema, default)
                if errors:
                    detail = "; ".join(
                        f"{where or '(answer)'}: {', '.join(msgs)}" for where, msgs in errors.items()
                    )
                    raise ConfigurationError(
                        f"RequestInput on_timeout= does not fit the response_schema: {detail}"
                    )
    escalate_after = _seconds(fields.get("escalate_after"), "escalate_after")
    escalate_to = _names(fields.get("escalate_to"), "escalate_to")
    if bool(escalate_after) != bool(escalate_to):
        raise ConfigurationError("RequestInput escalate_after= and escalate_to= go together")
    required = fields.get("approvals_required")
    required = 1 if required is None else required
    if not isinstance(required, int) or isinstance(required, bool) or required < 1:
        raise ConfigurationError(
            f"RequestInput approvals_required= must be a whole number >= 1, not {required!r}"
        )
    if required > 1:
        if not approval_question(schema):
            raise ConfigurationError(
                "RequestInput approvals_required= needs a response_schema with a boolean 'approved' field"
            )
    exclude = fields.get("exclude_requester")
    if exclude is not None and not isinstance(exclude, bool):
        raise ConfigurationError("RequestInput exclude_requester= must be True, False or None (the default)")
    return Declared(
        assignees=_names(fields.get("assignees"), "assignees"),
        timeout=timeout,
        deadline=deadline,
        on_timeout=mode,
        default_answer=default,
        remind_after=_seconds(fields.get("remind_after"), "remind_after"),
        escalate_after=escalate_after,
        escalate_to=escalate_to,
        approvals_required=required,
        exclude_requester=exclude,
    )


def approval_question(schema: Any) -> bool:
    """Whether a question with this JSON response schema is an approval: an object with a
    boolean ``approved`` field (what a quorum counts; its requester is kept out by default)."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    approved = properties.get("approved") if isinstance(properties, dict) else None
    return isinstance(approved, dict) and approved.get("type") == "boolean"


def _json(value: Any) -> Any:
    try:
        return to_json(value, "RequestInput on_timeout=")
    except WorkflowError as error:
        raise ConfigurationError(str(error)) from error


async def asked_policy(item: RequestInput, path: str, directory: Directory | None) -> HumanPolicy | None:
    """The policy of ``item`` asked now by the node at ``path``; a name ``directory`` does not
    know (it maps names to the unknown ones) fails the node, naming it."""
    policy = item.human_policy()
    if policy is None or directory is None:
        return policy
    names = [*policy.assignees, *policy.escalate_to]
    unknown = await directory(names) if names else []
    if unknown:
        which = "is no known user or group" if len(unknown) == 1 else "are no known users or groups"
        raise WorkflowError(
            f"Node {path} assigns its question to {', '.join(map(repr, unknown))}, which {which}"
        )
    return policy


# -- folding what people did ---------------------------------------------------------------


def approval(actor: str, value: Any) -> dict[str, Any]:
    return {"actor": actor, "answer": value}


def is_approval(value: Any) -> bool:
    return isinstance(value, dict) and value.get("approved") is True


def fold_answer(
    policy: HumanPolicy | None, given: list[dict[str, Any]], actor: str, value: Any, timed_out: bool
) -> tuple[bool, Any]:
    """Whether this answer resolves the question, and the value it resolves to.

    Without a quorum every answer resolves it with its value (``TIMED_OUT`` for a deadline
    with ``TIMEOUT_FAIL``). With one, an approval that leaves it short of the quorum adds to
    ``given`` and resolves nothing; a refusal, the quorum's last approval or a deadline
    resolves it with every answer given, in order, as ``{"actor": ..., "answer": ...}``.
    """
    if timed_out:
        return True, TIMED_OUT
    if policy is None or not policy.quorum:
        return True, value
    answers = [*given, approval(actor, value)]
    if actor != DEADLINE_ACTOR and is_approval(value) and len(answers) < policy.approvals_required:
        return False, answers
    return True, answers


@dataclass
class QuestionState:
    """What people did on one pending question."""

    claimed_by: str | None = None
    escalated: bool = False
    reminded: bool = False
    extra: list[str] = field(default_factory=list)  # reassigned to
    approvals: list[dict[str, Any]] = field(default_factory=list)


class Ledger:
    """The decisions taken on a session's questions, folded from its log."""

    def __init__(self) -> None:
        self.questions: dict[str, QuestionState] = {}
        self.timed_out: dict[str, str] = {}  # interrupt id -> the path that asked it, until it fails there

    def of(self, interrupt_id: str) -> QuestionState:
        state = self.questions.get(interrupt_id)
        if state is None:
            state = self.questions[interrupt_id] = QuestionState()
        return state

    def asked(self, interrupt_id: str) -> None:
        self.questions.pop(interrupt_id, None)  # asked again: a fresh start
        self.timed_out.pop(interrupt_id, None)

    def failed(self, path: str) -> None:
        """An execution at ``path`` failed: the time-outs of its questions are spent."""
        for interrupt_id in [key for key, asker in self.timed_out.items() if asker == path]:
            del self.timed_out[interrupt_id]

    def apply(self, data: dict[str, Any]) -> None:
        """Fold one ``assignment`` event's data (``decision``, ``interrupt_id``, ``actor``, ``users``)."""
        state = self.of(str(data.get("interrupt_id")))
        decision = data.get("decision")
        if decision == "claim":
            state.claimed_by = data.get("actor")
        elif decision == "unclaim":
            state.claimed_by = None
        elif decision == "reassign":
            users = list(data.get("users") or [])
            state.extra = users
            state.claimed_by = users[0] if len(users) == 1 and not users[0].startswith(GROUP_PREFIX) else None
        elif decision == "escalate":
            state.escalated = True
        elif decision == "remind":
            state.reminded = True

    def answer(
        self,
        interrupt_id: str,
        path: str,
        policy: HumanPolicy | None,
        actor: str,
        value: Any,
        timed_out: bool,
    ) -> tuple[bool, Any]:
        state = self.of(interrupt_id)
        resolved, folded = fold_answer(policy, state.approvals, actor, value, timed_out)
        if timed_out:
            self.timed_out[interrupt_id] = path
        if resolved:
            self.questions.pop(interrupt_id, None)
        else:
            state.approvals = folded
        return resolved, folded


def check_answer_by(ledger: Ledger, interrupt_id: str, policy: HumanPolicy | None, actor: str | None) -> None:
    """Refuse an answer the quorum cannot count: no actor, or someone who already approved."""
    if actor == DEADLINE_ACTOR:
        raise DecisionError(f"{DEADLINE_ACTOR!r} is the name the deadline answers by; a person cannot use it")
    if policy is None or not policy.quorum:
        return
    if not actor:
        raise DecisionError(
            f"Interrupt {interrupt_id!r} needs {policy.approvals_required} approvals: name who answers"
        )
    state = ledger.questions.get(interrupt_id)
    if state is not None and any(given["actor"] == actor for given in state.approvals):
        raise DecisionError(
            f"{actor} has already approved interrupt {interrupt_id!r}; an approval counts once"
        )


def decision_data(
    ledger: Ledger, interrupt_id: str, decision: str, actor: str, users: list[str] | None, force: bool = False
) -> dict[str, Any]:
    """The data of an ``assignment`` event for a person's decision; raises ``CallerError``."""
    if decision not in ("claim", "unclaim", "reassign"):
        raise DecisionError(f"Unknown decision {decision!r}; expected claim, unclaim or reassign")
    state = ledger.questions.get(interrupt_id) or QuestionState()
    holder = state.claimed_by
    if decision == "claim" and holder is not None:
        raise InterruptClaimedError(interrupt_id, holder)
    if decision == "unclaim" and holder is None:
        raise DecisionError(f"Interrupt {interrupt_id!r} is not claimed")
    if decision == "unclaim" and holder is not None and holder != actor and not force:
        raise InterruptClaimedError(interrupt_id, holder)
    data: dict[str, Any] = {"decision": decision, "interrupt_id": interrupt_id, "actor": actor}
    if decision == "reassign":
        data["users"] = _reassign_names(users)
    return data


def _reassign_names(users: list[str] | None) -> list[str]:
    try:
        names = _names(users, "users")
    except ConfigurationError as error:
        raise DecisionError(str(error).replace("RequestInput users=", "Reassign to")) from None
    if not names:
        raise DecisionError("Reassign to at least one user or group")
    return names


def due_decisions(
    ledger: Ledger, pending: dict[str, Any], now: float
) -> list[tuple[str, dict[str, Any] | None, Any, bool]]:
    """What the clock decides now: ``(interrupt_id, assignment data or None, answer, timed_out)``.

    ``pending`` maps interrupt ids to the pending ``Interrupt`` objects. A reminder and an
    escalation are ``assignment`` data; a deadline is an answer (the default, or timed out).
    """
    due: list[tuple[str, dict[str, Any] | None, Any, bool]] = []
    for interrupt_id, interrupt in pending.items():
        policy: HumanPolicy | None = interrupt.human
        if policy is None:
            continue
        state = ledger.questions.get(interrupt_id) or QuestionState()
        if policy.due_at is not None and policy.due_at <= now:
            if policy.on_timeout == "answer":
                due.append((interrupt_id, None, policy.default_answer, False))
            else:
                due.append((interrupt_id, None, None, True))
            continue
        if policy.escalate_at is not None and policy.escalate_at <= now and not state.escalated:
            data = {"decision": "escalate", "interrupt_id": interrupt_id, "actor": DEADLINE_ACTOR, "at": now}
            due.append((interrupt_id, data | {"users": policy.escalate_to}, None, False))
        if policy.remind_at is not None and policy.remind_at <= now and not state.reminded:
            data = {"decision": "remind", "interrupt_id": interrupt_id, "actor": DEADLINE_ACTOR, "at": now}
            due.append((interrupt_id, data, None, False))
    return due


def next_timer(policy: HumanPolicy | None, after: float | None = None) -> float | None:
    """When the clock next has something to do on a question with ``policy`` (epoch seconds),
    counting only what comes after ``after`` (the moment of a reminder or escalation)."""
    if policy is None:
        return None
    times = [t for t in (policy.due_at, policy.escalate_at, policy.remind_at) if t is not None]
    if after is not None:
        times = [t for t in times if t > after]
    return min(times) if times else None


def eligible(policy: HumanPolicy | None, state: QuestionState | None) -> list[str]:
    """Who may answer now (user names and ``group:`` names); empty: anyone allowed to answer."""
    if policy is None:
        return []
    names = list(state.extra) if state is not None and state.extra else list(policy.assignees)
    if state is not None and state.escalated:
        names += [name for name in policy.escalate_to if name not in names]
    return names


NO_TIMEOUTS: frozenset[str] = frozenset()


def split_timed_out(
    record: NodeRecord | None, path: str, ledger: Ledger
) -> tuple[dict[str, Any], frozenset[str]]:
    """A node execution's resume inputs, and the questions it asked whose deadline failed them.

    A timed-out question is no resume input: asking it again raises ``InterruptTimeoutError``
    in the node, once (after the node failed on it, it asks afresh).
    """
    if record is None or not record.resolved:
        return {}, NO_TIMEOUTS
    resolved = record.resolved
    if not ledger.timed_out:
        return dict(resolved), NO_TIMEOUTS
    inputs = {key: value for key, value in resolved.items() if value is not TIMED_OUT}
    mine = frozenset(key for key, asker in ledger.timed_out.items() if asker == path and key in resolved)
    return inputs, mine
