"""The inbox stream's positions: each change is placed at the log entry that made it.

Every change to the inbox is made by an append to some run's log, in the same transaction: a
question is asked by its ``interrupt`` event, answered by its ``answer`` event, superseded by
the event asking it again, withdrawn by the ``error``/``completed`` event of the execution that
asked it, and cancelled by the run's closing status event. The position of a change is that
event's row id (``Event.pk``), which grows across all runs; a stream's position ``P`` means
"every change placed at or before ``P`` has been sent". A resume after ``P`` sends the changes
placed after it, oldest first, each once.

Each look is made in one snapshot (``snapshot``): the highest position and what it covers
agree, so a change is never sent both before and after a position. On PostgreSQL two
transactions may commit in the other order than their rows were numbered; a change committed
late below a position already read (a "straggler") is caught by the live stream's comparison of
what it has shown with what is pending (sent with the stream's current position), but a
straggler that commits while a client is disconnected, below the position it resumes from, is
not resent. On SQLite, whose writers take turns, positions follow the commit order.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction
from django.db.models import Max

from wfapp.models import Event, Interrupt, InterruptStatus
from wfapp.web import queries


@dataclass(frozen=True, slots=True)
class Change:
    """``pending`` (asked) or ``closed`` (answered, superseded, withdrawn or cancelled)."""

    position: int
    kind: str
    question: Interrupt


@contextlib.contextmanager
def snapshot() -> Iterator[None]:
    """A read transaction whose statements all see one snapshot of the database."""
    with transaction.atomic():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
        yield


def horizon() -> int:
    """The highest position now (the latest log entry of any run)."""
    return int(Event.objects.aggregate(top=Max("pk"))["top"] or 0)


def matching(user: Any, workflow: str, q: str) -> Any:
    """The questions ``user`` may answer that match the inbox stream's filters."""
    rows = queries.answerable(user)
    if workflow:
        rows = rows.filter(workflow=workflow)
    if q:
        rows = rows.filter(message__icontains=q)
    return rows


def after(user: Any, workflow: str, q: str, position: int, upto: int) -> list[Change]:
    """The changes placed in ``(position, upto]``, in order (a question's pending before its closed)."""
    entries = list(Event.objects.filter(pk__gt=position, pk__lte=upto).values_list("pk", "session_id", "seq"))
    if not entries:
        return []
    at = {(session_id, seq): pk for pk, session_id, seq in entries}
    runs = {session_id for _, session_id, _ in entries}
    rows = list(matching(user, workflow, q).filter(session_id__in=runs).order_by("pk"))
    changes = []
    for row in rows:
        asked = at.get((row.session_id, row.request_seq))
        if asked is not None:
            changes.append(Change(asked, "pending", row))
        closed = _closing(row, at, position) if row.status != InterruptStatus.PENDING else None
        if closed is not None:
            changes.append(Change(closed, "closed", row))
    return sorted(changes, key=lambda c: (c.position, c.kind != "pending", c.question.pk))


def _closing(row: Interrupt, at: dict[tuple[str, int], int], position: int) -> int | None:
    """The position of the entry that closed ``row``, if it is among ``at`` (placed after ``position``)."""
    session_id = row.session_id
    if row.status == InterruptStatus.ANSWERED:
        return at.get((session_id, row.answer_seq or 0))
    if row.status == InterruptStatus.SUPERSEDED:
        later = (
            Interrupt.objects.filter(
                session_id=session_id, interrupt_id=row.interrupt_id, request_seq__gt=row.request_seq
            )
            .order_by("request_seq")
            .values_list("request_seq", flat=True)
            .first()
        )
        return None if later is None else at.get((session_id, later))
    if row.status == InterruptStatus.WITHDRAWN:
        seq = (
            Event.objects.filter(
                session_id=session_id,
                seq__gt=row.request_seq,
                kind__in=("error", "completed"),
                node_path=row.node_path,
            )
            .order_by("seq")
            .values_list("seq", flat=True)
            .first()
        )
        return None if seq is None else at.get((session_id, seq))
    # Cancelled: by the status event that closed the run, its last entry.
    last = max((pk for (s, _), pk in at.items() if s == session_id), default=None)
    return last if last is not None and last > position else None
