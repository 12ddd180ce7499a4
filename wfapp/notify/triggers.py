"""Notices for decisions on questions: assigned (reassigned), escalated, about to be overdue.

``wfapp.assignment.decided`` is sent inside the transaction that appends each decision (a
store's, the runtime's maintenance for timers), and the notice is recorded right there: it
commits with the decision or not at all, so a crash between the two cannot lose it, and a
decision rolled back leaves none. Its key names the decision's event, so the notice is
recorded once. Only these decisions pay for it (claims and releases notify no one); the pump
sends the notice like any other. A reminder (``remind_after``) is the "about to be overdue" notice.
"""

from __future__ import annotations

from typing import Any

from wfapp.assignment import decided
from wfapp.models import Interrupt, InterruptStatus

from . import outbox
from .models import NoticeKind

KINDS = {"reassign": NoticeKind.ASSIGNED, "escalate": NoticeKind.ESCALATED, "remind": NoticeKind.OVERDUE}


def record(session_id: str, interrupt_id: str, decision: str, users: list[str], seq: int) -> int:
    """Record the notice for the decision of event ``seq``; 1 if recorded (synchronous: it queries)."""
    kind = KINDS[decision]
    row = (
        Interrupt.objects.filter(
            session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.PENDING
        )
        .order_by("-request_seq")
        .first()
    )
    if row is None:
        return 0
    key = f"{kind}:{row.pk}:{seq}"
    # The newly eligible are told of an assignment or an escalation; everyone concerned of a reminder.
    told = outbox.named_users(users) if users and kind != NoticeKind.OVERDUE else None
    payload = outbox.question_payload(kind, key, row)
    return outbox.post(kind, key, session_id, payload, row=row, recipients=told)


def _on_decision(
    sender: Any,
    *,
    session_id: str,
    interrupt_id: str,
    decision: str,
    seq: int,
    users: Any = None,
    **_: Any,
) -> None:
    if decision in KINDS:
        record(session_id, interrupt_id, decision, list(users or []), seq)


def connect() -> None:
    decided.connect(_on_decision, dispatch_uid="wfapp.notify.triggers")
