"""The dashboard's reads: one place decides what a user may see, for pages and sockets alike.

Every list is keyset-paginated (no OFFSET), so a page costs the same on the first and the
hundredth screen; every page does a fixed number of queries whatever the data size.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q, QuerySet

from wfapp.models import Event, Interrupt, InterruptStatus, Session
from wfapp.permissions import can_answer
from wfapp.web import run_search
from wfapp.web.run_search import RunSearch

INBOX_PAGE = 25
RUNS_PAGE = 50
TIMELINE_PAGE = 100


@dataclass
class Page:
    """A slice of a keyset-ordered list and the cursors around it."""

    items: list[Any]
    next_cursor: str | None
    count: int | None = None
    partial: bool = False  # some rows were left unread (a bounded search)


def encode_cursor(*parts: Any) -> str:
    raw = json.dumps([p.isoformat() if isinstance(p, datetime) else p for p in parts])
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None, size: int) -> list[Any] | None:
    """The parts of a cursor, or None when it is absent or not one of ours."""
    if not cursor:
        return None
    try:
        parts = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError, UnicodeDecodeError, RecursionError):
        return None
    if not isinstance(parts, list) or len(parts) != size:
        return None
    # Ours hold a time and an id; anything else (a NUL PostgreSQL would refuse, say) is not ours.
    plain = all(type(p) is int or (type(p) is str and p.isascii() and "\x00" not in p) for p in parts)
    return parts if plain else None


def _moment(text: Any) -> datetime | None:
    try:
        return datetime.fromisoformat(str(text))
    except ValueError:
        return None


# -- interrupts ---------------------------------------------------------------------------------


def answerable(user: Any) -> QuerySet[Interrupt]:
    """The interrupts `user` may see and answer (none without the permission)."""
    if not can_answer(user):
        return Interrupt.objects.none()
    return Interrupt.objects.all()


def visible_interrupt(user: Any, pk: int) -> Interrupt | None:
    return answerable(user).select_related("session").filter(pk=pk).first()


def pending_count(user: Any) -> int:
    return answerable(user).filter(status=InterruptStatus.PENDING).count()


def _pending_matching(user: Any, workflow: str, q: str) -> QuerySet[Interrupt]:
    rows = answerable(user).filter(status=InterruptStatus.PENDING)
    if workflow:
        rows = rows.filter(workflow=workflow)
    if q:
        rows = rows.filter(message__icontains=q)
    return rows


def pending_matching_count(user: Any, *, workflow: str = "", q: str = "") -> int:
    """How many pending interrupts the inbox's filters match now (its "N pending" line)."""
    return _pending_matching(user, workflow, q).count()


def inbox_page(
    user: Any,
    *,
    workflow: str = "",
    q: str = "",
    newest: bool = False,
    cursor: str | None = None,
    up_to: int | None = None,
) -> Page:
    """Pending interrupts, oldest first (or newest), filtered, one keyset page.

    With `up_to` (an `interrupt_watermark()` taken first), later interrupts are left to the
    live socket, so a page and its socket never both show one.
    """
    rows = _pending_matching(user, workflow, q)
    if up_to is not None:
        rows = rows.filter(pk__lte=up_to)
    total = rows.count()
    order = ("-created_at", "-id") if newest else ("created_at", "id")
    after = decode_cursor(cursor, 2)
    moment = _moment(after[0]) if after else None
    if after and moment is not None and isinstance(after[1], int):
        if newest:
            rows = rows.filter(Q(created_at__lt=moment) | Q(created_at=moment, id__lt=after[1]))
        else:
            rows = rows.filter(Q(created_at__gt=moment) | Q(created_at=moment, id__gt=after[1]))
    items = list(rows.order_by(*order)[: INBOX_PAGE + 1])
    more = len(items) > INBOX_PAGE
    items = items[:INBOX_PAGE]
    next_cursor = encode_cursor(items[-1].created_at, items[-1].pk) if more else None
    return Page(items, next_cursor, total)


def pending_for_run(user: Any, session_id: str, up_to_seq: int) -> list[Interrupt]:
    """Pending interrupts asked up to `up_to_seq`: later ones reach the page with their events."""
    rows = answerable(user).filter(
        session_id=session_id, status=InterruptStatus.PENDING, request_seq__lte=up_to_seq
    )
    return list(rows.order_by("request_seq"))


# -- runs ---------------------------------------------------------------------------------------


def runs_page(search: RunSearch | None = None, *, cursor: str | None = None) -> Page:
    """Runs, newest first, filtered (`run_search`), one keyset page.

    `Page.partial` says that a text search left runs older than its scope unread.
    """
    rows, partial = run_search.apply(Session.objects.select_related("created_by"), search or RunSearch())
    after = decode_cursor(cursor, 2)
    moment = _moment(after[0]) if after else None
    if after and moment is not None:
        rows = rows.filter(Q(created_at__lt=moment) | Q(created_at=moment, id__lt=str(after[1])))
    items = list(rows.order_by("-created_at", "-id")[: RUNS_PAGE + 1])
    more = len(items) > RUNS_PAGE
    items = items[:RUNS_PAGE]
    next_cursor = encode_cursor(items[-1].created_at, items[-1].pk) if more else None
    return Page(items, next_cursor, partial=partial)


def get_run(session_id: str) -> Session | None:
    if "\x00" in session_id:  # no run has one, and PostgreSQL refuses to look it up
        return None
    return Session.objects.select_related("created_by").filter(pk=session_id).first()


# -- events -------------------------------------------------------------------------------------

_EVENT_FIELDS = ("seq", "timestamp", "kind", "node_path", "author", "data")


def events_before(session_id: str, before: int | None, limit: int = TIMELINE_PAGE) -> list[dict[str, Any]]:
    """The `limit` events before seq `before` (the latest when None), oldest first."""
    rows = Event.objects.filter(session_id=session_id)
    if before is not None:
        rows = rows.filter(seq__lt=before)
    latest = list(rows.order_by("-seq").values(*_EVENT_FIELDS)[:limit])
    return latest[::-1]


LIVE_BATCH = 500  # events per live message; seqs are contiguous, so a full batch means "maybe more"


def events_after(session_id: str, after: int, limit: int = LIVE_BATCH) -> list[dict[str, Any]]:
    """Events after seq `after`, oldest first (what a live page has not seen)."""
    rows = Event.objects.filter(session_id=session_id, seq__gt=after).order_by("seq")
    return list(rows.values(*_EVENT_FIELDS)[:limit])


def status_rows(session_id: str) -> list[tuple[str, str]]:
    """`(kind, node_path)` of every event that changes a node's status, in log order."""
    rows = Event.objects.filter(
        session_id=session_id, kind__in=("started", "completed", "interrupt", "error")
    )
    return list(rows.order_by("seq").values_list("kind", "node_path"))


def state_deltas(session_id: str) -> list[Any]:
    rows = Event.objects.filter(session_id=session_id, data__has_key="state").order_by("seq")
    return list(rows.values_list("data__state", flat=True))


def interrupt_watermark() -> int:
    """The highest interrupt id now: a page rendered now has seen every interrupt up to it."""
    return Interrupt.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
