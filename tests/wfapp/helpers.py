"""Small helpers shared by the wfapp tests."""

from __future__ import annotations

import asyncio

from wfapp.models import Session


async def settled(session_id: str, *statuses: str, timeout: float = 15.0) -> Session:
    """Wait until the run has one of ``statuses`` and no worker holds it; return it."""
    wanted = set(statuses or ("waiting", "completed", "failed", "cancelled"))
    async with asyncio.timeout(timeout):
        while True:
            session = await Session.objects.aget(pk=session_id)
            if session.status in wanted and session.lease_owner is None:
                return session
            await asyncio.sleep(0.02)
