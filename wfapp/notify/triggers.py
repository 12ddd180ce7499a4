"""Notices for decisions on questions: assigned (reassigned), escalated, about to be overdue.

``wfapp.assignment.decided`` fires after each decision commits, in the thread that appended
it (a store's, the runtime's maintenance for timers). The receiver hands the notice to a thread
of its own, so recording it never holds up the append path; the pump sends it like any other.
A reminder (``remind_after``) is the "about to be overdue" notice.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from django.db import connection

from wfapp.assignment import decided
from wfapp.models import Interrupt, InterruptStatus

from . import outbox
from .models import NoticeKind

logger = logging.getLogger(__name__)

KINDS = {"reassign": NoticeKind.ASSIGNED, "escalate": NoticeKind.ESCALATED, "remind": NoticeKind.OVERDUE}

_executor = ThreadPoolExecutor(1, thread_name_prefix="wfapp-notify-triggers")


def record(session_id: str, interrupt_id: str, decision: str, users: list[str]) -> int:
    """Record the notice for one decision; 1 if recorded (synchronous: it queries)."""
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
    key = f"{kind}:{row.pk}:{time.time_ns()}"
    # The newly eligible are told of an assignment or an escalation; everyone concerned of a reminder.
    told = outbox.named_users(users) if users and kind != NoticeKind.OVERDUE else None
    payload = outbox.question_payload(kind, key, row)
    return outbox.post(kind, key, session_id, payload, row=row, recipients=told)


def _record_in_thread(*args: Any) -> None:
    try:
        record(*args)
    except Exception:
        logger.exception("notifications: could not record a notice for a decision")
    finally:
        connection.close()


def _on_decision(
    sender: Any, *, session_id: str, interrupt_id: str, decision: str, users: Any = None, **_: Any
) -> None:
    if decision in KINDS:
        _executor.submit(_record_in_thread, session_id, interrupt_id, decision, list(users or []))


def connect() -> None:
    decided.connect(_on_decision, dispatch_uid="wfapp.notify.triggers")
