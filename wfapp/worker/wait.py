"""Wait for the workers to settle a run: what ``wf start|answer|retry`` do in workers mode.

A run is settled after a write once a worker has recorded a newer settled status (waiting,
completed, failed, cancelled) than the one before the write, has no events after it, and
holds no lease: exactly when a worker's release succeeds (``wfapp.store.lease.release``).
"""

from __future__ import annotations

import asyncio

from asgiref.sync import sync_to_async

from wfapp.errors import UnknownRunError
from wfapp.models import Session

_POLL_SECONDS = 0.05


class NotAdvancedError(Exception):
    """No worker settled the run in time (is one running?)."""


def settled_seq(session_id: str) -> int:
    """The seq of the run's last settled status (0 for a new run)."""
    row = Session.objects.filter(pk=session_id).values_list("settled_seq", flat=True).first()
    if row is None:
        raise UnknownRunError(session_id)
    return int(row)


def _settled_after(session_id: str, before: int) -> bool:
    row = Session.objects.filter(pk=session_id).values("settled_seq", "last_seq", "lease_owner").first()
    if row is None:
        raise UnknownRunError(session_id)
    return bool(
        row["settled_seq"] > before and row["last_seq"] <= row["settled_seq"] and not row["lease_owner"]
    )


async def until_settled(session_id: str, before: int, timeout: float) -> None:
    """Return once a worker settled the run past ``before``; ``NotAdvancedError`` after ``timeout``."""
    check = sync_to_async(_settled_after)
    try:
        async with asyncio.timeout(timeout):
            while not await check(session_id, before):
                await asyncio.sleep(_POLL_SECONDS)
    except TimeoutError:
        raise NotAdvancedError(
            f"Run {session_id!r} was not advanced within {timeout:g} s: is a worker running "
            "(manage.py wf worker, with the same DATABASE_URL and WFAPP_RUNTIME=workers)?"
        ) from None
