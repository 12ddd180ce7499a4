"""The event model: what nodes yield and what the log keeps.

One ``Event`` class serves both. A node yields ``Event(output=..., route=...,
state={...}, message="...", long_running_tool_ids={...})``; the engine stamps the stored fields
(``seq``, ``session_id``, ``node_path``, ``kind``, ...) when it appends. Stored events
are plain JSON data: ``Event.model_dump(mode="json")`` round-trips through
``Event.model_validate``.

Kinds of stored events:

===============  ==========================================================
``started``      a node execution began (``node_path``; ``seen_seq``: the log position
                 its replay decision was based on). A plain function's execution that
                 nobody watches live (a store without ``publish``) writes none unless it
                 asks, tells or fails: its ``completed`` carries the ``seen_seq``
``output``       a node yielded its output (``output``, ``output_for``)
``route``        a node yielded a route without output
``state``        a node yielded a state delta only
``message``      a node told the user something (``message``) without output or route
``interrupt``    a node asks for input (``interrupt``)
``answer``       someone answered an interrupt (``answer``; author = actor)
``assignment``   a decision on a pending question: claim, unclaim, reassign, escalate,
                 remind (``assignment``; author = actor; see ``engine.human``)
``completed``    a node execution ended; carries deferred output/route/state (and
                 ``seen_seq`` when it is the execution's only event)
``error``        a node attempt failed (``error`` with its ``traceback``; ``input``: the
                 attempt's input, when the log can keep it)
``retry``        someone retried a failed run (author = actor; ``node_path``: the failed node
                 they retried, or the workflow's own path; ``input``: the input they edited
                 for that node, which it takes from then on; ``message``: their reason)
``status``       the run's status changed: waiting, completed (``output_seq``: the event
                 that carries the workflow's output), failed, cancelled (``message``:
                 the reason given, author = who cancelled)
===============  ==========================================================
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import ConfigDict, Field, PrivateAttr

from .human import Declared, HumanPolicy, declare
from .strict import StrictModel
from .values import json_schema

Route = str | int | bool
DEFAULT_ROUTE = "__DEFAULT__"

EventKind = Literal[
    "",
    "started",
    "output",
    "route",
    "state",
    "message",
    "interrupt",
    "answer",
    "assignment",
    "completed",
    "error",
    "status",
    "retry",
    "comment",  # a person's remark on the run or one of its questions (``message``); changes nothing
]
KINDS: tuple[str, ...] = get_args(EventKind)[1:]  # every stored kind


class Interrupt(StrictModel):
    """A pending request for input, as the run result and the inbox show it."""

    model_config = ConfigDict(frozen=True)

    id: str
    node_path: str = ""
    message: str | None = None
    payload: Any = None
    response_schema: dict[str, Any] | None = None
    human: HumanPolicy | None = None  # assignees, deadline, escalation, quorum (engine.human)

    def states_again(self, earlier: Interrupt) -> bool:
        """Whether this asking is ``earlier`` stated again (the same node asking the same thing,
        as a resumed node does for its questions still pending): the same asking, not a new one."""
        return (
            self.node_path == earlier.node_path
            and self.message == earlier.message
            and self.payload == earlier.payload
            and self.response_schema == earlier.response_schema
        )


class Answer(StrictModel):
    """An answer given to an interrupt."""

    model_config = ConfigDict(frozen=True)

    interrupt_id: str
    value: Any = None
    actor: str | None = None
    timed_out: bool = False  # the deadline passed with on_timeout=TIMEOUT_FAIL
    request_seq: int | None = None  # the seq of the asking answered (None: logs written before it)
    digest: str | None = None  # ``asking_digest`` of the question as the answerer was shown it, if given


class ErrorInfo(StrictModel):
    """What went wrong: the exception class name, its message and (for a node) its traceback."""

    model_config = ConfigDict(frozen=True)

    type: str
    message: str
    traceback: str | None = None


class Event(StrictModel):
    """A yielded event, or a stored one once the engine has stamped it."""

    model_config = ConfigDict(frozen=True)

    output: Any = None
    route: Route | list[Route] | None = None
    state: dict[str, Any] | None = None
    long_running_tool_ids: frozenset[str] | None = None
    message: str | None = None
    branch: str | None = None  # ADK's parallel lane label; kept on the stored event as given

    seq: int = 0
    session_id: str = ""
    invocation_id: str = ""
    author: str = ""
    node_path: str = ""
    kind: EventKind = ""
    timestamp: float = 0.0
    output_for: list[str] | None = None
    interrupt: Interrupt | None = None
    answer: Answer | None = None
    assignment: dict[str, Any] | None = None
    error: ErrorInfo | None = None
    status: str | None = None
    seen_seq: int | None = None
    output_seq: int | None = None
    input: Any = None

    if not TYPE_CHECKING:  # type checkers keep the typed constructor pydantic's plugin gives

        def __init__(self, /, **data: Any) -> None:
            # What a node yields or returns (often one per call) is usually plain: build it as
            # pydantic would without its validator, which sets up every one of the stored fields.
            if data.keys() <= _YIELDED and (plain := _plain_yield(data)) is not None:
                _set(self, "__dict__", {**_EVENT_DEFAULTS, **plain})
                _set(self, "__pydantic_fields_set__", set(plain))
                _set(self, "__pydantic_extra__", None)
                _set(self, "__pydantic_private__", None)
                return
            super().__init__(**data)


class RequestInput(StrictModel):
    """Yield this from a node to pause the run until someone answers.

    ``response_schema`` may be a pydantic model, a type such as ``list[str]`` or a JSON
    Schema dict; answers are validated against it before anything is written.

    The optional human-step fields (``engine.human``): ``assignees`` (user names and
    ``group:`` names), ``timeout`` (a timedelta) or ``deadline`` (an aware datetime) with
    ``on_timeout`` (a default answer, checked against the schema here, or ``TIMEOUT_FAIL``,
    the default), ``remind_after``, ``escalate_after`` with ``escalate_to``,
    ``approvals_required`` (a quorum of distinct approvers on a boolean ``approved`` field) and
    ``exclude_requester`` (True: the run's requester may not answer; False: they may; None, the
    default: they may not answer an approval question, one with a boolean ``approved`` field,
    unless the application lets them for the workflow). A field that does not fit raises ``ConfigurationError`` naming it.

    ADK's spellings are accepted too: ``prompt`` for ``message`` and the camelCase names
    (``interruptId``, ``responseSchema``).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    message: str | None = None
    response_schema: Any = None
    payload: Any = None
    interrupt_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    assignees: list[str] | None = None
    timeout: timedelta | None = None
    deadline: datetime | None = None
    on_timeout: Any = None
    remind_after: timedelta | None = None
    escalate_after: timedelta | None = None
    escalate_to: list[str] | None = None
    approvals_required: int | None = None
    exclude_requester: bool | None = None
    _declared: Declared = PrivateAttr()

    def __init__(self, /, **data: Any) -> None:
        for alias, name in _REQUEST_ALIASES.items():
            if alias in data:
                value = data.pop(alias)
                data.setdefault(name, value)
        super().__init__(**data)
        self._declared = declare(self.__dict__, json_schema(self.response_schema))

    def human_policy(self, now: float | None = None) -> HumanPolicy | None:
        """The policy stored on the question asked at ``now`` (None: nothing declared)."""
        return self._declared.policy(now)


_REQUEST_ALIASES = {"prompt": "message", "interruptId": "interrupt_id", "responseSchema": "response_schema"}
_EVENT_DEFAULTS = {name: info.default for name, info in Event.model_fields.items()}
_new = object.__new__
_set = object.__setattr__
_YIELDED = frozenset({"output", "route", "state", "message"})
_ROUTE_TYPES = (str, int, bool)


def _plain_yield(data: dict[str, Any]) -> dict[str, Any] | None:
    """``data`` as Event's validator would leave it, when that is certain; else None.

    Certain means exact types it keeps as they are (any output; a str, int or bool route or
    a list of them; a dict state with str keys; a str message). It copies a list or a dict,
    so this does too.
    """
    route = data.get("route")
    if route is not None and type(route) not in _ROUTE_TYPES:
        if type(route) is not list or not all(type(r) in _ROUTE_TYPES for r in route):
            return None
        data["route"] = list(route)
    state = data.get("state")
    if state is not None:
        if type(state) is not dict or not all(type(key) is str for key in state):
            return None
        data["state"] = dict(state)
    message = data.get("message")
    if message is not None and type(message) is not str:
        return None
    return data


def stored_event(fields: dict[str, Any]) -> Event:
    """Build an ``Event`` from engine-made fields without validating them again.

    The engine builds every field from checked values, and this runs once per event on
    the hot path, where pydantic's ``model_construct`` costs several times more.
    """
    event = _new(Event)
    _set(event, "__dict__", {**_EVENT_DEFAULTS, **fields})
    _set(event, "__pydantic_fields_set__", set(fields))
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    return event
