"""wfapp's errors. Callers' mistakes are ``ValueError`` subclasses and change nothing.

The engine's own caller errors (``InterruptAlreadyAnswered``, ``InvalidAnswerError``,
``UnknownInterruptError``, ``UnknownSessionError``) pass through the actions (``wfapp.runs``) unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping


class WfappError(Exception):
    """Root of the errors wfapp raises on purpose."""


class BadRequest(WfappError, ValueError):
    """The caller asked for something that cannot be done; nothing was written."""


class UnknownWorkflowError(BadRequest):
    def __init__(self, name: str, known: Iterable[str] = ()) -> None:
        self.name = name
        known = list(known)
        hint = f"; registered: {', '.join(known)}" if known else ""
        super().__init__(f"Unknown workflow {name!r}{hint}")


class VersionNotDeployedError(BadRequest):
    """A run started on a version of its workflow that is not registered now."""

    def __init__(self, name: str, version: str, deployed: Iterable[str] = ()) -> None:
        self.name = name
        self.version = version
        self.deployed = list(deployed)
        listed = f"; registered: {', '.join(self.deployed)}" if self.deployed else ""
        super().__init__(f"Version {version} of workflow {name!r} is not deployed{listed}")


class UnknownRunError(BadRequest):
    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        super().__init__(f"Unknown run {session_id!r}")


class InputValidationError(BadRequest):
    """A start input fails the workflow's input schema; ``field_errors`` maps field to messages."""

    def __init__(self, workflow: str, field_errors: Mapping[str, list[str]]) -> None:
        self.workflow = workflow
        self.field_errors = dict(field_errors)
        detail = "; ".join(
            f"{field or '(input)'}: {', '.join(msgs)}" for field, msgs in self.field_errors.items()
        )
        super().__init__(f"Invalid input for workflow {workflow!r}: {detail}")


class MalformedJSONError(BadRequest):
    def __init__(self, what: str, detail: str) -> None:
        super().__init__(f"Malformed JSON in {what}: {detail}")


class PayloadTooLargeError(BadRequest):
    def __init__(self, what: str, size: int, limit: int) -> None:
        self.size = size
        self.limit = limit
        super().__init__(f"{what} is {size} bytes; the limit is {limit} bytes")


class NotPermitted(BadRequest):
    """The user lacks the permission the action needs (``wfapp.human.permissions``); nothing was written."""


class NotAssignedError(NotPermitted):
    """The user may answer questions, but not this one: its assignees, claim or quorum say who."""


class ClaimHeldError(NotAssignedError):
    """An answer, by someone who may override claims (a superuser, a reassigner), to a question
    another user holds, without saying to answer over the claim. Nothing is written."""

    def __init__(self, holder: str) -> None:
        self.holder = holder
        super().__init__(f"{holder} holds this: answer anyway?")


class RunStateError(BadRequest):
    """The run's status does not allow the action (retrying a run that did not fail, say)."""


class RunFailedError(RunStateError):
    """An answer to a question of a failed run: taking it would silently retry the failed node.
    Nothing is written; someone who may retry the run does so first (then the question waits)."""

    def __init__(self, node: str) -> None:
        self.node = node
        at = f" at {node}" if node else ""
        super().__init__(f"The run failed{at}; retry it first")


class HumanInputError(RunStateError):
    """A retry with an edited input for a node whose input comes from a human step: it would
    replace what people decided. Nothing is written; the step is asked again instead."""

    def __init__(self, node: str, step: str) -> None:
        self.node = node
        self.step = step
        super().__init__(
            f"The input of {node!r} comes from the human step {step!r}: an edited input would replace "
            "what people decided there. Retry it unedited, or have the step asked again (a new run)"
        )


class QuestionClosedError(BadRequest):
    """A claim, unclaim or reassignment of a question that is no longer pending: answered,
    withdrawn, superseded or cancelled (before the decision, or while it was being made)."""

    def __init__(self, session_id: str, interrupt_id: str) -> None:
        self.session_id = session_id
        self.interrupt_id = interrupt_id
        super().__init__(
            f"Question {interrupt_id!r} of run {session_id!r} is no longer pending "
            "(answered, withdrawn or cancelled); nothing was changed"
        )


class CommentError(BadRequest):
    """A comment that cannot be kept: no text, too long, or about a question not of its run;
    ``field`` names what was wrong (``text`` or ``question``)."""

    def __init__(self, message: str, field: str = "text") -> None:
        self.field = field
        super().__init__(message)


class LeaseLostError(WfappError):
    """Another worker claimed the run; this worker must stop writing to it."""

    def __init__(self, session_id: str, owner: str, epoch: int) -> None:
        self.session_id = session_id
        super().__init__(f"Run {session_id!r}: lease {owner}#{epoch} is no longer held")


class RejectionReasonError(BadRequest):
    """A "reject with reason" that is not one: not an approve/reject question, not a rejection,
    or no reason (``wfapp.human.rejections``)."""
