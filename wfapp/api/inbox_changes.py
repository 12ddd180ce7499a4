"""The inbox's changes: each is placed at the log entry that made it.

Every change to the inbox is made by an append to some run's log, in the same transaction: a
question is asked by its ``interrupt`` event, answered by its ``answer`` event, superseded by
the event asking it again, withdrawn by the ``error``/``completed`` event of the execution that
asked it, and cancelled by the run's closing status event. Given some new entries (the ones a
stream's position does not cover, ``inbox_positions``), ``after`` finds the changes placed at
them, so a change is sent exactly when its entry is.

Each look is made in one snapshot (``snapshot``): the entries read, the questions' states and
the position the look reaches agree.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from django.db import connection, transaction

from wfapp.models import Event, Interrupt, InterruptStatus
from wfapp.web import queries


@dataclass(frozen=True, slots=True)
class Change:
    """``pending`` (asked) or ``closed`` (answered, superseded, withdrawn or cancelled) at the
    log entry with id ``entry``."""

    entry: int
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


def matching(user: Any, workflow: str, q: str) -> Any:
    """The questions ``user`` may answer that match the inbox stream's filters."""
    rows = queries.answerable(user)
    if workflow:
        rows = rows.filter(workflow=workflow)
    if q:
        rows = rows.filter(message__icontains=q)
    return rows


def after(user: Any, workflow: str, q: str, entries: list[tuple[int, str, int]]) -> list[Change]:
    """The changes placed at ``entries`` (id, run, seq), in order (a question's pending before its closed)."""
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
        closed = _closing(row, at) if row.status != InterruptStatus.PENDING else None
        if closed is not None:
            changes.append(Change(closed, "closed", row))
    return sorted(changes, key=lambda c: (c.entry, c.kind != "pending", c.question.pk))


def _closing(row: Interrupt, at: dict[tuple[str, int], int]) -> int | None:
    """The id of the entry that closed ``row``, if it is among ``at``."""
    if row.status == InterruptStatus.ANSWERED:
        return at.get((row.session_id, row.answer_seq or 0))
    later = Event.objects.filter(session_id=row.session_id, seq__gt=row.request_seq)
    if row.status == InterruptStatus.SUPERSEDED:
        asked = Interrupt.objects.filter(
            session_id=row.session_id, interrupt_id=row.interrupt_id, request_seq__gt=row.request_seq
        )
        seq = asked.order_by("request_seq").values_list("request_seq", flat=True).first()
    elif row.status == InterruptStatus.WITHDRAWN:
        ended = later.filter(kind__in=("error", "completed"), node_path=row.node_path)
        seq = ended.order_by("seq").values_list("seq", flat=True).first()
    else:  # cancelled: by the status event that closed the run
        closing = later.filter(kind="status", data__status__in=("completed", "cancelled"))
        seq = closing.order_by("seq").values_list("seq", flat=True).first()
    return None if seq is None else at.get((row.session_id, seq))
