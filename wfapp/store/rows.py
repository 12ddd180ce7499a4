"""A run's row and a question's pending inbox row, looked up for the actions above."""

from __future__ import annotations

from wfapp.errors import UnknownRunError
from wfapp.models import Interrupt, InterruptStatus, Session


def session_row(session_id: str) -> Session:
    """The run's row; ``UnknownRunError`` when there is none."""
    try:
        return Session.objects.get(pk=session_id)
    except Session.DoesNotExist:
        raise UnknownRunError(session_id) from None


def pending_row(session_id: str, interrupt_id: str) -> Interrupt | None:
    """The question's inbox row while it is pending (None once answered, withdrawn or cancelled)."""
    return (
        Interrupt.objects.select_related("session")
        .filter(session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.PENDING)
        .first()
    )
