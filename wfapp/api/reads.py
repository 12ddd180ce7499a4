"""The API's reads, synchronous (call them with ``sync_to_async``), on the dashboard's queries.

``wfapp.web.queries`` decides what a user may see, for the pages, the sockets and the API.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from wfapp.api import schemas
from wfapp.api.problems import Problem
from wfapp.human.permissions import can_retry
from wfapp.models import Interrupt
from wfapp.runs.failures import edited_inputs
from wfapp.web import presenter, queries, run_search
from wfapp.web.run_search import BadSearch

EVENTS_PAGE = queries.LIVE_BATCH


def run_document(user: Any, session_id: str) -> dict[str, Any]:
    session = queries.get_run(user, session_id)
    if session is None:
        raise Problem("not-found", f"No run {session_id!r}.")
    pending = queries.pending_for_run(user, session.pk, session.last_seq)
    return schemas.run(session, pending, presenter.cancelled_by(session), edited_inputs(session.pk))


def _cursor(cursor: str | None, id_type: type) -> str | None:
    """The cursor if it is one the lists give out (a moment and an id), else ``bad-cursor``."""
    if not cursor:
        return None
    parts = queries.decode_cursor(cursor, 2)
    try:
        valid = parts is not None and bool(datetime.fromisoformat(parts[0])) and type(parts[1]) is id_type
    except (TypeError, ValueError):
        valid = False
    if not valid:
        raise Problem("bad-cursor", "The 'after' cursor is not one this API gave out; start without it.")
    return cursor


def runs_page(user: Any, filters: dict[str, Any], cursor: str | None) -> dict[str, Any]:
    """One page of runs filtered as the dashboard's runs list is (`run_search`)."""
    try:
        search = run_search.parse(filters)
    except BadSearch as bad:
        raise Problem("bad-request", str(bad)) from None
    page = queries.runs_page(user, search, cursor=_cursor(cursor, str))
    return {
        "items": [schemas.run_summary(s) for s in page.items],
        "next_cursor": page.next_cursor,
        "partial": False,  # the text search reads every run now; kept for v1 clients
    }


def events_page(user: Any, session_id: str, after: int, limit: int) -> dict[str, Any]:
    session = queries.get_run(user, session_id)
    if session is None:
        raise Problem("not-found", f"No run {session_id!r}.")
    rows = queries.events_after(session.pk, after, limit)
    full = len(rows) == limit and rows[-1]["seq"] < session.last_seq
    tracebacks = can_retry(user, session)  # code and data of the failure: for who may act on it
    return {
        "items": [schemas.event(row, tracebacks=tracebacks) for row in rows],
        "last_seq": session.last_seq,
        "next_after": rows[-1]["seq"] if full else None,
    }


def questions_page(user: Any, workflow: str, q: str, newest: bool, cursor: str | None) -> dict[str, Any]:
    page = queries.inbox_page(
        user, workflow=workflow, q=q.strip()[:200], newest=newest, cursor=_cursor(cursor, int)
    )
    return {
        "items": [schemas.question(row) for row in page.items],
        "next_cursor": page.next_cursor,
        "count": page.count or 0,
    }


def asking(user: Any, pk: int) -> Interrupt:
    """The question ``pk`` (404 unless visible): the one asking an answer to it is bound to."""
    row = queries.visible_interrupt(user, pk)
    if row is None:
        raise Problem("not-found", f"No question {pk}.")
    return row


def question_document(user: Any, pk: int) -> tuple[dict[str, Any], str, str]:
    """The question (404 unless visible), its run and its interrupt id."""
    row = queries.visible_interrupt(user, pk)
    if row is None:
        raise Problem("not-found", f"No question {pk}.")
    return schemas.question(row), row.session_id, row.interrupt_id


def stream_batch(user: Any, session_id: str, after: int) -> tuple[list[dict[str, Any]], str, int]:
    """Events after ``after`` (one batch), and the run's status and last seq read just before."""
    session = queries.get_run(user, session_id)
    if session is None:
        return [], "cancelled", after
    rows = queries.events_after(session_id, after)
    return [schemas.event(row) for row in rows], session.status, session.last_seq
