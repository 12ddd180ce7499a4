"""Approve or reject many questions at once (the inbox's bulk action), each one on its own.

Only approve/reject questions (``bulk_decision``) are answered; the others need their full
form, and so does an agent's tool call awaiting approval (``offered``): its arguments are read
one call at a time, never approved by the batch or by a key press. A rejection may carry a reason, applied to each question rejected exactly as a single
"Reject with reason" (``wfapp.human.rejections``: in the answer's reason field, else as the run's
comment on the question). The reason is required when a ticked question's answer has a field
for it (an approve/reject question *with a reason*): without it nothing is answered. A reason
with approvals is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync

from engine.errors import (
    AskingChangedError,
    AskingClosedError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    SessionStateError,
    UnknownInterruptError,
)
from wfapp.errors import NotAssignedError, RejectionReasonError, RunStateError, UnknownWorkflowError
from wfapp.human import audit
from wfapp.models import AttemptOutcome, Interrupt, InterruptStatus
from wfapp.runs import answering
from wfapp.schema_forms.form import bulk_decision, reason_field


@dataclass(frozen=True)
class BulkOutcome:
    """What became of one ticked question: ``row`` is the answered row when ``ok``."""

    pk: int
    ok: bool
    text: str
    row: Interrupt | None = None


TOOL_APPROVAL = "tool_approval"  # the payload kind of an agent's tool-call approval


def offered(row: Interrupt) -> bool:
    """Whether ``row`` may be answered in bulk: an approve/reject question, not a tool call."""
    payload = row.payload if isinstance(row.payload, dict) else {}
    return payload.get("kind") != TOOL_APPROVAL and bulk_decision(row.response_schema) is not None


def label(row: Interrupt) -> str:
    return f"{row.workflow} · {row.message[:80]}"


def needing_reason(rows: list[Interrupt]) -> list[Interrupt]:
    """The pending approve/reject questions among ``rows`` whose answer has a field for a reason."""
    return [
        row
        for row in rows
        if row.status == InterruptStatus.PENDING
        and offered(row)
        and reason_field(row.response_schema) is not None
    ]


def check_reason(rows: list[Interrupt], approve: bool, reason: str, *, user: Any) -> None:
    """Refuse (``RejectionReasonError``, recorded on each question concerned) a bulk decision
    whose reason is missing or out of place; nothing is answered then."""
    if approve and reason:
        raise RejectionReasonError(
            "A reason goes with a rejection: approve without one, or reject the selected. Nothing was answered."
        )
    if approve or reason:
        return
    missing = needing_reason(rows)
    if not missing:
        return
    names = "; ".join(label(row) for row in missing[:5]) + ("; ..." if len(missing) > 5 else "")
    message = f"Rejecting these needs a reason: {names}. Nothing was answered."
    for row in missing:
        audit.record_row(row, user, {"decision": "reject"}, AttemptOutcome.INVALID, message)
    raise RejectionReasonError(message)


def answer(
    ids: list[int],
    rows: dict[int, Interrupt],
    approve: bool,
    *,
    user: Any,
    reason: str = "",
    digests: dict[int, str] | None = None,
) -> list[BulkOutcome]:
    """Answer each ticked question ``ids`` the user may answer (``rows``), in order; raises
    ``RejectionReasonError`` before answering any when ``check_reason`` refuses.

    Each answer is bound to the ticked question's asking (and to ``digests[pk]``, what its card
    showed): one asked again since is refused and reported, never answered in its place."""
    reason = reason.strip()
    check_reason([rows[pk] for pk in ids if pk in rows], approve, reason, user=user)
    shown = digests or {}
    return [_one(pk, rows.get(pk), approve, user, reason, shown.get(pk)) for pk in ids]


def _one(
    pk: int, row: Interrupt | None, approve: bool, user: Any, reason: str, digest: str | None
) -> BulkOutcome:
    if row is None:
        return BulkOutcome(pk, False, "Not found.")
    bulk = bulk_decision(row.response_schema)
    decision = "approve" if approve else "reject"
    if bulk is None or not offered(row):
        detail = (
            "needs the full form: its answer is not a yes-or-no decision"
            if bulk is None
            else "needs the full form: a tool call is approved one at a time, with its arguments in view"
        )
        audit.record_row(row, user, {"decision": decision}, AttemptOutcome.INVALID, detail)
        return BulkOutcome(pk, False, f"{label(row)}: needs the full form.")
    try:
        async_to_sync(answering.answer_interrupt)(
            row.session_id,
            row.interrupt_id,
            bulk.answer(approve),
            user=user,
            reason=reason or None,
            asking=audit.asking_of(row, digest),
        )
    except InterruptAlreadyAnswered as refused:
        row.refresh_from_db()
        return BulkOutcome(pk, False, f"{label(row)}: {answered_elsewhere(row, refused)}")
    except (AskingClosedError, AskingChangedError):
        row.refresh_from_db()
        return BulkOutcome(
            pk, False, f"{label(row)}: {audit.stale_reason(row)} Your answer was not recorded."
        )
    except (SessionStateError, RunStateError, UnknownInterruptError, InvalidAnswerError) as refused:
        return BulkOutcome(pk, False, f"{label(row)}: not answered ({refused}).")
    except (NotAssignedError, RejectionReasonError) as refused:
        return BulkOutcome(pk, False, f"{label(row)}: not answered ({refused}).")
    except UnknownWorkflowError as gone:
        return BulkOutcome(pk, False, f"{label(row)}: {workflow_gone(gone)}")
    row.refresh_from_db()
    done = "Approved." if approve else (f"Rejected: {reason}" if reason else "Rejected.")
    return BulkOutcome(pk, row.status == InterruptStatus.ANSWERED, f"{label(row)}: {done}", row)


def answered_elsewhere(row: Interrupt, refused: InterruptAlreadyAnswered) -> str:
    who = refused.answered_by or row.answered_by or "someone else"
    when = refused.answered_at or row.answered_at
    at = f" at {when:%H:%M:%S} UTC" if hasattr(when, "strftime") else ""
    return f"Already answered by {who}{at}. Your answer was not recorded."


def workflow_gone(gone: UnknownWorkflowError) -> str:
    return (
        f"The workflow {gone.name!r} of this question is no longer registered, so the run cannot go on. "
        "Your answer was not recorded."
    )
