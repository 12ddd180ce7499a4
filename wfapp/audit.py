"""The answer audit trail: every attempt on a known question is kept in ``AnswerAttempt``.

Accepted answers are recorded by the store, in the transaction that appends them; every
refusal is recorded here, whoever refused it: the services (already answered, invalid, the
run no longer open, busy, not permitted) or the dashboard before the answer reached them (a
form that failed validation, a body over the size limit, a user who may not answer). An
attempt on a question that does not exist is not a question's history and is not kept.

Functions here are synchronous (they query); async callers wrap them in ``sync_to_async``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from engine.limits import safe_text

from .models import AnswerAttempt, AttemptOutcome, Interrupt, InterruptStatus
from .permissions import workflow_filter

# Form fields that are not part of an answer (never kept with a refused form's fields).
_NOT_ANSWER = frozenset({"csrfmiddlewaretoken", "next"})


def actor_name(user: Any) -> str | None:
    """How events and audit records name ``user`` (None for no user)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return str(user.get_username())


def _attempt(
    session_id: str, interrupt_id: str, user: Any, value: Any, outcome: str, detail: str
) -> AnswerAttempt:
    return AnswerAttempt(
        session_id=session_id,
        interrupt_id=interrupt_id,
        actor=actor_name(user) or "",
        value=value,
        outcome=outcome,
        detail=detail,
    )


def record(session_id: str, interrupt_id: str, user: Any, value: Any, outcome: str, detail: str = "") -> bool:
    """Record a refused attempt on a known question; return whether the question is known."""
    if not Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id).exists():
        return False
    _attempt(session_id, interrupt_id, user, value, outcome, detail).save()
    return True


def record_row(row: Interrupt, user: Any, value: Any, outcome: str, detail: str = "") -> None:
    """Record a refused attempt on the inbox row ``row`` (known by construction)."""
    _attempt(row.session_id, row.interrupt_id, user, value, outcome, detail).save()


def record_forbidden(pks: list[int], user: Any, value: Any) -> None:
    """Record attempts on inbox rows ``pks`` by a user who may not answer them (those that exist)."""
    if not pks:
        return
    detail = f"{actor_name(user) or 'An anonymous user'} may not answer interrupts"
    rows = (
        Interrupt.objects.filter(pk__in=pks)
        .exclude(workflow_filter(user, "answer"))
        .values_list("session_id", "interrupt_id")
    )
    AnswerAttempt.objects.bulk_create(
        _attempt(session_id, interrupt_id, user, value, AttemptOutcome.FORBIDDEN, detail)
        for session_id, interrupt_id in rows
    )


def submitted(fields: Any) -> dict[str, Any]:
    """A form's fields as submitted (``QueryDict``), for the record of a form that was refused.

    A field given once is kept as its text, a repeated one as the list of its values; a NUL
    (which PostgreSQL refuses, and the form refused) is kept spelled out.
    """
    kept: dict[str, Any] = {}
    for key in fields:
        if key in _NOT_ANSWER:
            continue
        values = [safe_text(str(value)) for value in fields.getlist(key)]
        kept[safe_text(key)] = values[0] if len(values) == 1 else values
    return kept


def winner(session_id: str, interrupt_id: str) -> tuple[str, datetime | None] | None:
    """Who answered the question's latest request and when, or None if it is not answered.

    Read after a refusal, this sees the winning answer: the refusal came from a log that
    already held it, and the answer and its inbox row are committed together.
    """
    row = (
        Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id)
        .exclude(status=InterruptStatus.SUPERSEDED)
        .order_by("-request_seq")
        .values("status", "answered_by", "answered_at")
        .first()
    )
    if row is None or row["status"] != InterruptStatus.ANSWERED:
        return None
    return row["answered_by"] or "", row["answered_at"]
