"""The dashboard's reads: what a user may see, for pages, sockets and the API alike.

Every read of runs, questions and events filters through ``wfapp.human.permissions``
(``workflow_filter``): a run of a workflow the user may not view does not exist for them.

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

from django.db.models import BooleanField, F, Prefetch, Q, QuerySet
from django.db.models.expressions import RawSQL

from wfapp.human import assignment
from wfapp.human.permissions import workflow_filter
from wfapp.models import Delivery, DeliveryStatus, Event, Interrupt, InterruptStatus, Session
from wfapp.web import run_search
from wfapp.web.run_search import RunSearch
from wfapp.web.run_state import ANONYMOUS_ACTOR

INBOX_PAGE = 25
RUNS_PAGE = 50
TIMELINE_PAGE = 100


@dataclass
class Page:
    """A slice of a keyset-ordered list and the cursors around it."""

    items: list[Any]
    next_cursor: str | None
    count: int | None = None


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
    """The interrupts `user` may see and answer (those of the workflows they may answer)."""
    return Interrupt.objects.filter(workflow_filter(user, "answer"))


def visible_runs(user: Any) -> QuerySet[Session]:
    """The runs `user` may see (those of the workflows they may view)."""
    return Session.objects.filter(workflow_filter(user, "view"))


def visible_interrupt(user: Any, pk: int) -> Interrupt | None:
    return answerable(user).select_related("session").filter(pk=pk).first()


def may_see_interrupt(user: Any, pk: int) -> bool:
    """Whether `user` may see the question (``visible_interrupt`` without reading it)."""
    return answerable(user).filter(pk=pk).exists()


# A run's columns a card never reads, and that can be large.
RUN_BULK = ("input", "output", "error", "search_text")


def with_summary(rows: QuerySet[Interrupt]) -> QuerySet[Interrupt]:
    """``rows`` with each one's run (its summary, status and requester, which a card shows or
    asks), without the run's bulky columns: in a second query, as a join would let PostgreSQL
    join every pending question's run before it sorts and cuts the page."""
    return rows.prefetch_related(Prefetch("session", queryset=Session.objects.defer(*RUN_BULK)))


def pending_count(user: Any) -> int:
    return answerable(user).filter(status=InterruptStatus.PENDING).count()


def _pending_matching(user: Any, workflow: str, q: str, tab: str = "all") -> QuerySet[Interrupt]:
    rows = answerable(user).filter(status=InterruptStatus.PENDING)
    if workflow:
        rows = rows.filter(workflow=workflow)
    if q:
        rows = rows.filter(message__icontains=q)
    return assignment.for_tab(rows, user, tab)


def pending_matching_count(user: Any, *, workflow: str = "", q: str = "", tab: str = "all") -> int:
    """How many pending interrupts the inbox's filters match now (its "N pending" line)."""
    return _pending_matching(user, workflow, q, tab).count()


# The list view's other sorts (by a column): one page of the first ones, without "show more".
LIST_SORTS = {"summary": ("session__summary", "id"), "assignee": ("assignees", "id")}
LIST_SORTED_PAGE = 100


def inbox_page(
    user: Any,
    *,
    workflow: str = "",
    q: str = "",
    newest: bool = False,
    due: bool = False,
    by: str = "",
    tab: str = "all",
    cursor: str | None = None,
    up_to: int | None = None,
) -> Page:
    """Pending interrupts, oldest first (or newest, or soonest due), filtered, one keyset page;
    `tab` narrows it to one of `wfapp.human.assignment.TABS`.

    With `up_to` (an `interrupt_watermark()` taken first), later interrupts are left to the
    live socket, so a page and its socket never both show one.
    """
    rows = _pending_matching(user, workflow, q, tab)
    if up_to is not None:
        rows = rows.filter(pk__lte=up_to)
    total = rows.count()
    if due:
        return _by_due(rows, cursor, total)
    if by in LIST_SORTS:
        return Page(list(with_summary(rows).order_by(*LIST_SORTS[by])[:LIST_SORTED_PAGE]), None, total)
    order = ("-created_at", "-id") if newest else ("created_at", "id")
    after = decode_cursor(cursor, 2)
    moment = _moment(after[0]) if after else None
    if after and moment is not None and isinstance(after[1], int):
        if newest:
            rows = rows.filter(Q(created_at__lt=moment) | Q(created_at=moment, id__lt=after[1]))
        else:
            rows = rows.filter(Q(created_at__gt=moment) | Q(created_at=moment, id__gt=after[1]))
    # With its run: a card says whether the run failed, and whether the viewer requested it.
    items = list(with_summary(rows).order_by(*order)[: INBOX_PAGE + 1])
    more = len(items) > INBOX_PAGE
    items = items[:INBOX_PAGE]
    next_cursor = encode_cursor(items[-1].created_at, items[-1].pk) if more else None
    return Page(items, next_cursor, total)


def _by_due(rows: QuerySet[Interrupt], cursor: str | None, total: int) -> Page:
    """One keyset page of ``rows``, soonest due first, those without a due time last."""
    after = decode_cursor(cursor, 2)
    if after and isinstance(after[1], int):
        moment = _moment(after[0]) if after[0] else None
        if moment is not None:
            rows = rows.filter(
                Q(due_at__gt=moment) | Q(due_at=moment, id__gt=after[1]) | Q(due_at__isnull=True)
            )
        else:
            rows = rows.filter(due_at__isnull=True, id__gt=after[1])
    items = list(with_summary(rows).order_by(F("due_at").asc(nulls_last=True), "id")[: INBOX_PAGE + 1])
    more = len(items) > INBOX_PAGE
    items = items[:INBOX_PAGE]
    next_cursor = encode_cursor(items[-1].due_at or "", items[-1].pk) if more else None
    return Page(items, next_cursor, total)


def pending_for_run(user: Any, session_id: str, up_to_seq: int) -> list[Interrupt]:
    """Pending interrupts asked up to `up_to_seq`: later ones reach the page with their events."""
    rows = answerable(user).filter(
        session_id=session_id, status=InterruptStatus.PENDING, request_seq__lte=up_to_seq
    )
    return list(rows.order_by("request_seq"))


# -- runs ---------------------------------------------------------------------------------------


def runs_page(user: Any, search: RunSearch | None = None, *, cursor: str | None = None) -> Page:
    """Runs `user` may see, newest first, filtered (`run_search`), one keyset page."""
    rows = run_search.apply(visible_runs(user).select_related("created_by"), search or RunSearch())
    after = decode_cursor(cursor, 2)
    moment = _moment(after[0]) if after else None
    if after and moment is not None:
        rows = rows.filter(Q(created_at__lt=moment) | Q(created_at=moment, id__lt=str(after[1])))
    items = list(rows.order_by("-created_at", "-id")[: RUNS_PAGE + 1])
    more = len(items) > RUNS_PAGE
    items = items[:RUNS_PAGE]
    next_cursor = encode_cursor(items[-1].created_at, items[-1].pk) if more else None
    return Page(items, next_cursor)


def cancelled_by(session_ids: list[str]) -> dict[str, str]:
    """Run id -> who cancelled it, from its log (one query; runs cancelled anonymously are left out)."""
    if not session_ids:
        return {}
    found = (
        Event.objects.filter(session_id__in=session_ids, kind="status", data__status="cancelled")
        .exclude(author__in=("", ANONYMOUS_ACTOR))
        .order_by("seq")
        .values_list("session_id", "author")
    )
    return dict(found)  # the latest cancellation wins (there is only one)


def helpers_of(session_ids: list[str]) -> dict[str, dict[str, list[str]]]:
    """Run id -> {"answered": [...], "retried": [...]}: who did so, first time first (one query).

    Reads only the runs' answer and retry events, through the partial index that holds them.
    """
    if not session_ids:
        return {}
    found: dict[str, dict[str, list[str]]] = {}
    rows = (
        Event.objects.filter(_HUMAN, session_id__in=session_ids)
        .exclude(author__in=("", ANONYMOUS_ACTOR))
        .order_by("session_id", "seq")
        .values_list("session_id", "kind", "author")
    )
    for session_id, kind, author in rows:
        names = found.setdefault(session_id, {"answered": [], "retried": []})[_ACTION[kind]]
        if author not in names:
            names.append(author)
    return found


_ACTION = {"answer": "answered", "retry": "retried"}  # the people's actions a runs list names
# The kinds written out, not bound: SQLite uses a partial index only when the query's terms
# match its condition literally (`kind IN (?, ?)` would read every event of each run).
_HUMAN = RawSQL("kind IN ('answer', 'retry')", (), output_field=BooleanField())


def get_run(user: Any, session_id: str) -> Session | None:
    """The run, if `user` may see it (None for a run of a workflow they may not view)."""
    if "\x00" in session_id:  # no run has one, and PostgreSQL refuses to look it up
        return None
    return visible_runs(user).select_related("created_by").filter(pk=session_id).first()


def may_view_run(user: Any, session_id: str) -> bool:
    """Whether `user` may see the run (``get_run`` without reading it: a live page's recheck)."""
    return "\x00" not in session_id and visible_runs(user).filter(pk=session_id).exists()


# -- events -------------------------------------------------------------------------------------

_EVENT_FIELDS = ("seq", "timestamp", "kind", "node_path", "author", "data")


def events_before(session_id: str, before: int | None, limit: int = TIMELINE_PAGE) -> list[dict[str, Any]]:
    """The `limit` events before seq `before` (the latest when None), oldest first."""
    if "\x00" in session_id:  # no run has one (a page may read its events before its row)
        return []
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


def failed_deliveries(user: Any) -> int | None:
    """How many notifications could not be delivered, for those who may see deliveries (else None)."""
    if not user.has_perm("wfapp.view_delivery"):
        return None
    return Delivery.objects.filter(status=DeliveryStatus.FAILED).count()
