"""Engine errors, sorted by who is at fault.

- ``ConfigurationError``: the workflow or node definition is wrong (a bad graph).
- ``CallerError`` (a ``ValueError``): the caller asked for something impossible, such
  as an unknown session or an invalid answer. Nothing is written to the log.
- ``WorkflowError``: a node or the workflow broke a runtime rule; the run fails.
- ``UnreadableLogError``: a stored log cannot be read back; the run fails visibly.
- ``InvariantError``: the engine itself is wrong.
- ``NodeTimeoutError``: a node ran past its ``timeout``.
- ``InterruptTimeoutError``: a question with ``on_timeout=TIMEOUT_FAIL`` passed its deadline.

``NodeInterruptedError`` is a control-flow signal, not an error: it derives from
``BaseException`` so that ``except Exception`` in user code does not swallow it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class EngineError(Exception):
    """Root of every error the engine raises on purpose."""


class ConfigurationError(EngineError, ValueError):
    """A workflow or node is defined in a way that can never run."""


WorkflowConfigurationError = ConfigurationError


class GraphValidationError(ConfigurationError):
    """A graph breaks one of the validation rules; names the rule and the nodes."""

    def __init__(self, rule: int, title: str, detail: str, nodes: Iterable[str] = ()) -> None:
        self.rule = rule
        self.title = title
        self.nodes = tuple(nodes)
        super().__init__(f"Graph validation failed, rule {rule} ({title}): {detail}")


class UnknownFieldError(ConfigurationError, TypeError):
    """A public model was given a field it does not have."""

    def __init__(self, model: str, unknown: Iterable[str], known: Iterable[str]) -> None:
        self.model = model
        self.unknown = tuple(unknown)
        names = ", ".join(map(repr, self.unknown))
        plural = "s" if len(self.unknown) > 1 else ""
        super().__init__(f"{model}() got unknown field{plural} {names}; its fields are {', '.join(known)}")


class CallerError(EngineError, ValueError):
    """The caller asked for something the log does not allow; nothing was written."""


class UnknownSessionError(CallerError):
    """No session with this id exists."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"Unknown session {session_id!r}")


class SessionExistsError(CallerError):
    """``run`` was given the id of a session that already exists."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"Session {session_id!r} already exists; use resume or advance")


class SessionStateError(CallerError):
    """The session's status does not allow this call (resuming a completed run, say)."""


class UnknownInterruptError(CallerError):
    """An answer names an interrupt id that is not pending in the session."""

    def __init__(self, session_id: str, interrupt_ids: Iterable[str]) -> None:
        self.interrupt_ids = sorted(interrupt_ids)
        super().__init__(
            f"Session {session_id!r} has no pending interrupt {', '.join(map(repr, self.interrupt_ids))}"
        )


class InterruptAlreadyAnswered(CallerError):
    """The interrupt was answered before; the first answer wins."""

    def __init__(self, interrupt_id: str, answered_by: str | None = None, answered_at: Any = None) -> None:
        self.interrupt_id = interrupt_id
        self.answered_by = answered_by
        self.answered_at = answered_at
        who = f" by {answered_by}" if answered_by else ""
        when = f" at {answered_at}" if answered_at else ""
        super().__init__(f"Interrupt {interrupt_id!r} was already answered{who}{when}")


class AskingClosedError(CallerError):
    """An answer or decision names an asking of an interrupt that no longer waits for it: the
    question was asked again (``pending_seq``: the seq of the asking pending now, if any), or
    withdrawn. It never goes to another asking."""

    def __init__(self, interrupt_id: str, request_seq: int, pending_seq: int | None = None) -> None:
        self.interrupt_id = interrupt_id
        self.request_seq = request_seq
        self.pending_seq = pending_seq
        now = f"; it was asked again at seq {pending_seq}" if pending_seq is not None else ""
        super().__init__(
            f"Interrupt {interrupt_id!r} asked at seq {request_seq} no longer waits for an answer{now}"
        )


class AskingChangedError(CallerError):
    """An answer's digest is not that of the asking it names: the answerer was shown something
    else than what is asked."""

    def __init__(self, interrupt_id: str, request_seq: int) -> None:
        self.interrupt_id = interrupt_id
        self.request_seq = request_seq
        super().__init__(
            f"Interrupt {interrupt_id!r} asked at seq {request_seq} is not the question this answer was "
            "given to (its message, payload or schema differ)"
        )


class InvalidAnswerError(CallerError):
    """An answer does not match its interrupt's ``response_schema``."""

    def __init__(self, interrupt_id: str, field_errors: Mapping[str, list[str]]) -> None:
        self.interrupt_id = interrupt_id
        self.field_errors = dict(field_errors)
        detail = "; ".join(
            f"{field or '(answer)'}: {', '.join(msgs)}" for field, msgs in field_errors.items()
        )
        super().__init__(f"Invalid answer for interrupt {interrupt_id!r}: {detail}")


class SessionVersionError(CallerError):
    """The session started on another version of the workflow than the runner's."""

    def __init__(self, session_id: str, recorded: str, given: str) -> None:
        self.session_id = session_id
        self.recorded = recorded
        self.given = given
        super().__init__(
            f"Session {session_id!r} started on version {recorded!r} of its workflow; "
            f"this runner has version {given!r}: resume it with version {recorded!r}"
        )


class InvalidInputError(CallerError):
    """The workflow input cannot be stored in the event log."""


class NotFailedNodeError(CallerError):
    """A retry named a node that is not one of the run's failed nodes; nothing was written."""

    def __init__(self, session_id: str, node_path: str, failed: Iterable[str]) -> None:
        self.node_path = node_path
        self.failed = sorted(failed)
        named = ", ".join(self.failed) or "none"
        super().__init__(
            f"Node {node_path!r} of session {session_id!r} has not failed; its failed nodes: {named}"
        )


class ValueLimitError(CallerError):
    """A value a caller sent breaks a limit of the event log (``engine.limits``); nothing was written.

    ``rule`` is ``"depth"``, ``"size"`` or ``"character"`` (a NUL, an unpaired surrogate), ``"number"`` (NaN, Infinity); ``path`` says where in the value (keys and
    indexes), ``field`` the same as a dotted path ("" for the whole value).
    """

    def __init__(
        self,
        message: str,
        what: str,
        rule: str,
        limit: int,
        found: int | None = None,
        path: tuple[str | int, ...] = (),
    ) -> None:
        self.what = what
        self.rule = rule
        self.limit = limit
        self.found = found
        self.path = path
        self.field = ".".join(map(str, path))
        super().__init__(message)


class NoAnswersError(CallerError):
    """``resume`` on a waiting run was given no answers."""


class ConcurrencyError(EngineError):
    """The log moved on since the writer last read it; nothing was written."""

    def __init__(self, session_id: str, expected_seq: int, actual_seq: int) -> None:
        self.session_id = session_id
        self.expected_seq = expected_seq
        self.actual_seq = actual_seq
        super().__init__(f"Session {session_id!r}: expected last seq {expected_seq}, found {actual_seq}")


class UnreadableLogError(EngineError):
    """A session's stored log cannot be read back (written before a limit existed, say)."""

    def __init__(self, session_id: str, reason: str, seq: int | None = None) -> None:
        self.session_id = session_id
        self.reason = reason
        self.seq = seq
        where = f" at event {seq}" if seq is not None else ""
        super().__init__(f"The event log of session {session_id!r} could not be read{where}: {reason}")


class WorkflowError(EngineError):
    """A node or workflow broke a runtime rule; the run fails with this message."""


class WorkflowDataError(WorkflowError, ValueError):
    """A value does not fit what is declared for it: a node's input or output its schema, a
    state write the ``state_schema``, a function parameter that has no value to bind.

    A ``ValueError``, as in ADK, so a caller of ``ctx.run_node`` can catch it.
    """


class StateSchemaError(WorkflowDataError, TypeError):
    """A state write that the ``state_schema`` does not allow: an undeclared key or a value of
    the wrong type. A ``ValueError``, and the ``TypeError`` ADK raises."""


class TerminalOutputsError(WorkflowError, ValueError):
    """Two different terminal nodes of one workflow both produced output (ADK raises its
    ``WorkflowConfigurationError``, a ``ValueError``)."""


class ReplayDivergenceError(WorkflowError):
    """The session's log no longer replays on the workflow's code; nothing was executed."""


class NodeUsageError(WorkflowError, ValueError):
    """A call the engine refuses, raised at the call: ``ctx.run_node`` with a purely numeric
    (or '/' or '@') custom run id or a second ``use_as_output`` in one execution, or a second
    ``ctx.output = ...``.

    The node may catch it and go on: nothing happened for the refused call (the numeric-id
    child never runs, an earlier delegation or output stands), and the same code is refused
    the same way on replay. Uncaught, it fails the node.
    """


class RuleViolation(WorkflowError):
    """A node broke a rule that would make its resume wrong (``run_node`` without
    ``rerun_on_resume``, a duplicate pending interrupt id).

    It fails the execution even when the node catches it.
    """


class InvariantError(EngineError, RuntimeError):
    """The engine reached a state it should never reach."""


class NodeTimeoutError(EngineError, TimeoutError):
    """A node ran longer than its ``timeout``."""

    def __init__(self, node_name: str, timeout: float) -> None:
        self.node_name = node_name
        self.timeout = timeout
        super().__init__(f"Node '{node_name}' timed out after {timeout} seconds.")


class DynamicNodeFailError(EngineError):
    """Raised by ``await ctx.run_node(...)`` when the child failed (ADK's name).

    ``error`` is the child's exception and ``error_node_path`` the path its error event was
    written at. What is raised is also an instance of the child's error class, so a caller
    may catch either this or what the child raised (``except KeyError``). A caller that does
    not catch it fails with the child's error, written once, at the child's path.
    """

    error: BaseException
    error_node_path: str


_failed_classes: dict[type[BaseException], type[DynamicNodeFailError]] = {}


def dynamic_node_failed(error: BaseException, node_path: str) -> BaseException:
    """The ``DynamicNodeFailError`` (of the child error's class as well) for a failed child."""
    kind = type(error)
    cls = _failed_classes.get(kind)
    if cls is None:
        try:
            cls = type(kind.__name__, (DynamicNodeFailError, kind), {"__module__": kind.__module__})
        except TypeError:  # a class that cannot be combined (a layout conflict): ADK's class alone
            cls = DynamicNodeFailError
        _failed_classes[kind] = cls
    try:
        failed = cls.__new__(cls, *error.args)  # the error class's own __new__; not its __init__
    except Exception:  # a __new__ that wants other arguments
        failed = DynamicNodeFailError(str(error))
    failed.__dict__.update(getattr(error, "__dict__", {}))
    failed.args = error.args
    failed.error = error
    failed.error_node_path = node_path
    failed.__cause__ = error
    return failed


def child_error(error: BaseException) -> BaseException:
    """The child's own error for a ``DynamicNodeFailError`` a caller let through."""
    return error.error if isinstance(error, DynamicNodeFailError) else error


class NodeInterruptedError(BaseException):
    """Raised by ``ctx.run_node`` when the child waits for input; the engine catches it."""

    def __init__(self, interrupt_ids: Iterable[str] = (), node_path: str = "") -> None:
        self.interrupt_ids = list(interrupt_ids)
        self.node_path = node_path
        super().__init__(f"Node {node_path} is waiting for input {self.interrupt_ids}")


class InterruptTimeoutError(EngineError, TimeoutError):
    """A question with ``on_timeout=TIMEOUT_FAIL`` was not answered by its deadline."""

    def __init__(self, interrupt_id: str, node_path: str) -> None:
        self.interrupt_id = interrupt_id
        self.node_path = node_path
        super().__init__(
            f"Interrupt {interrupt_id!r} asked by node {node_path} was not answered by its deadline"
        )


class InterruptClaimedError(CallerError):
    """The question is claimed by someone else (claim it after they unclaim, or reassign it)."""

    def __init__(self, interrupt_id: str, holder: str) -> None:
        self.interrupt_id = interrupt_id
        self.holder = holder
        super().__init__(f"Interrupt {interrupt_id!r} is claimed by {holder}")


class DecisionError(CallerError):
    """A claim, unclaim, reassignment or approval that the question does not allow."""
