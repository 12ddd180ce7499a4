"""Plain-data reports of runs, for the CLI's JSON output (and anything else that wants them)."""

from __future__ import annotations

from typing import Any

from wfapp.errors import UnknownRunError
from wfapp.human.comments import comments
from wfapp.human.permissions import can_view
from wfapp.models import Interrupt, InterruptStatus, Session
from wfapp.store.events import DjangoEventStore
from wfapp.store.inbox_rows import decode


def interrupt_report(row: Interrupt) -> dict[str, Any]:
    """One interrupt as plain data."""
    return {
        "question": row.pk,
        "id": row.interrupt_id,
        "request_seq": row.request_seq,  # the asking: a loop may ask the same id again
        "digest": row.digest,
        "node_path": row.node_path,
        "message": row.message,
        "payload": row.payload,
        "response_schema": row.response_schema,
        "status": row.status,
        "answer": row.answer,
        "answered_by": row.answered_by or None,
        "answered_at": row.answered_at.isoformat() if row.answered_at else None,
        # Human steps (wfapp.human.assignment): who may answer, who holds it, by when, the quorum so far.
        "assignees": decode(row.assignees),
        "claimed_by": row.claimed_by or None,
        "due_at": row.due_at.isoformat() if row.due_at else None,
        "approvals_required": row.approvals_required,
        "approvals": row.approvals or [],
    }


def run_report(session_id: str, *, events: bool = False, user: Any = None) -> dict[str, Any]:
    """A run's status, input, output or error, and interrupts (and, on request, its events).

    With ``user``, a run of a workflow that user may not view is unknown (None: the system).
    """
    try:
        session = Session.objects.select_related("created_by").get(pk=session_id)
    except Session.DoesNotExist:
        raise UnknownRunError(session_id) from None
    if user is not None and not can_view(user, session.workflow):
        raise UnknownRunError(session_id)
    interrupts = list(session.interrupts.exclude(status=InterruptStatus.SUPERSEDED).order_by("request_seq"))
    report: dict[str, Any] = {
        "run": session.pk,
        "workflow": session.workflow,
        "version": session.version or None,
        "status": session.status,
        "created_by": session.created_by.get_username() if session.created_by else None,
        "created_at": session.created_at.isoformat(),
        "updated_at": session.updated_at.isoformat(),
        "input": session.input,
        "output": session.output,
        "error": session.error,
        "pending": [interrupt_report(row) for row in interrupts if row.status == InterruptStatus.PENDING],
        "answered": [interrupt_report(row) for row in interrupts if row.status == InterruptStatus.ANSWERED],
        "comments": comments(session_id),
        "last_seq": session.last_seq,
    }
    if events:
        report["events"] = [
            event.model_dump(mode="json", exclude_none=True)
            for event in DjangoEventStore().list_events_sync(session_id)
        ]
    return report
