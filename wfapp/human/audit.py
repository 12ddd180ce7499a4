"""The answer audit trail: every attempt on a known question is kept in ``AnswerAttempt``.

Accepted answers are recorded by the store, in the transaction that appends them; every
refusal is recorded here, whoever refused it: the actions (already answered, invalid, the
run no longer open, busy, not permitted) or the dashboard before the answer reached them (a
form that failed validation, a body over the size limit, a user who may not answer). An
attempt on a question that does not exist is not a question's history and is not kept. An
attempt by someone who may not answer keeps a digest of what they sent and a short preview
(``digest``), never the value itself: it cannot fill the table, whatever they send.

Functions here are synchronous (they query); async callers wrap them in ``sync_to_async``.
"""

from __future__ import annotations

import hashlib
import json
from datetime import datetime
from typing import Any

from engine import Asking
from engine.limits import safe_text
from wfapp.human.permissions import workflow_filter
from wfapp.models import AnswerAttempt, AttemptOutcome, Interrupt, InterruptStatus

PREVIEW = 200  # characters of a forbidden attempt's value kept to show what it was

# Form fields that are not part of an answer (never kept with a refused form's fields).
_NOT_ANSWER = frozenset({"csrfmiddlewaretoken", "next", "digest"})


def actor_name(user: Any) -> str | None:
    """How events and audit records name ``user`` (None for no user)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return str(user.get_username())


def _attempt(
    session_id: str,
    interrupt_id: str,
    user: Any,
    value: Any,
    outcome: str,
    detail: str,
    asking: Asking | None = None,
) -> AnswerAttempt:
    return AnswerAttempt(
        session_id=session_id,
        interrupt_id=interrupt_id,
        actor=actor_name(user) or "",
        value=value,
        outcome=outcome,
        detail=detail,
        request_seq=asking.request_seq if asking is not None else None,
        digest=(asking.digest or "") if asking is not None else "",
    )


def record(
    session_id: str,
    interrupt_id: str,
    user: Any,
    value: Any,
    outcome: str,
    detail: str = "",
    asking: Asking | None = None,
) -> bool:
    """Record a refused attempt on a known question (given to ``asking``, when it named one);
    return whether the question is known."""
    if not Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id).exists():
        return False
    _attempt(session_id, interrupt_id, user, value, outcome, detail, asking).save()
    return True


def record_row(row: Interrupt, user: Any, value: Any, outcome: str, detail: str = "") -> None:
    """Record a refused attempt on the inbox row ``row`` (known by construction)."""
    _attempt(row.session_id, row.interrupt_id, user, value, outcome, detail, Asking(row.request_seq)).save()


def asking_of(row: Interrupt, digest: str | None) -> Asking:
    """The asking ``row`` is, as an answer given to it names it (``digest``: what was shown)."""
    return Asking(row.request_seq, digest or None)


def stale_reason(row: Interrupt) -> str:
    """Why an answer given to the asking ``row`` was refused, once it no longer waits (a 409's text)."""
    if row.status == InterruptStatus.ANSWERED:
        when = f" at {row.answered_at:%Y-%m-%d %H:%M:%S} UTC" if row.answered_at else ""
        return f"This question was already answered by {row.answered_by or 'someone else'}{when}."
    if row.status == InterruptStatus.PENDING:
        return "This question is not the one your answer was given to: what it shows has changed."
    newer = (
        Interrupt.objects.filter(
            session_id=row.session_id, interrupt_id=row.interrupt_id, request_seq__gt=row.request_seq
        )
        .order_by("request_seq")
        .values_list("pk", flat=True)
        .first()
    )
    if newer is not None:
        return f"This question was superseded: it was asked again (question {newer}), with what it shows now."
    return f"This question no longer waits for an answer (it was {row.status})."


def digest(value: Any) -> dict[str, Any] | None:
    """What an audit record keeps of ``value``: its JSON's SHA-256, size and first characters."""
    if value is None:
        return None
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    data = text.encode()
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "preview": safe_text(text[:PREVIEW]),
    }


def record_forbidden(pks: list[int], user: Any, value: Any) -> None:
    """Record attempts on inbox rows ``pks`` by a user who may not answer them (those that exist),
    with the ``digest`` of ``value``."""
    if not pks:
        return
    kept = digest(value)
    detail = f"{actor_name(user) or 'An anonymous user'} may not answer interrupts"
    rows = (
        Interrupt.objects.filter(pk__in=pks)
        .exclude(workflow_filter(user, "answer"))
        .values_list("session_id", "interrupt_id")
    )
    AnswerAttempt.objects.bulk_create(
        _attempt(session_id, interrupt_id, user, kept, AttemptOutcome.FORBIDDEN, detail)
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


def winner(
    session_id: str, interrupt_id: str, asking: Asking | None = None
) -> tuple[str, datetime | None] | None:
    """Who answered the question's latest request (or ``asking``) and when, or None if it is
    not answered.

    Read after a refusal, this sees the winning answer: the refusal came from a log that
    already held it, and the answer and its inbox row are committed together.
    """
    rows = Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id)
    if asking is not None:
        rows = rows.filter(request_seq=asking.request_seq)
    row = (
        rows.exclude(status=InterruptStatus.SUPERSEDED)
        .order_by("-request_seq")
        .values("status", "answered_by", "answered_at")
        .first()
    )
    if row is None or row["status"] != InterruptStatus.ANSWERED:
        return None
    return row["answered_by"] or "", row["answered_at"]
