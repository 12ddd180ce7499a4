"""Collect notices and send what is due, outside the runs' hot path.

``pump`` does one pass (synchronous: it queries and may wait for an SMTP or webhook server).
``run_forever`` is the embedded runtime's notifier: a task of its own, passing every
``WFAPP_NOTIFY_SECONDS`` in a thread of its own, so a slow webhook delays no lease renewal and
no turn. In workers mode ``wfapp.worker.notify_tasks`` runs ``pump`` as a periodic job instead.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

from django.conf import settings
from django.db import connection

from wfapp.notify import outbox, sending

logger = logging.getLogger(__name__)


def pump() -> int:
    """Record new notices, then send the due deliveries; how many deliveries were tried."""
    outbox.collect()
    return sending.send_due()


def pump_and_close() -> int:
    """``pump`` in a thread that outlives the pass: its connection goes back when the pass ends."""
    try:
        return pump()
    finally:
        connection.close()


async def run_forever() -> None:
    """Pump every ``WFAPP_NOTIFY_SECONDS`` until cancelled; a failed pass is logged and retried."""
    executor = ThreadPoolExecutor(1, thread_name_prefix="wfapp-notify")
    loop = asyncio.get_running_loop()
    try:
        while True:
            await asyncio.sleep(float(settings.WFAPP_NOTIFY_SECONDS))
            try:
                await loop.run_in_executor(executor, pump_and_close)
            except Exception:
                logger.exception("notifications: a pass failed; trying again")
    finally:
        # A pass in flight finishes (its transaction commits, its connection goes back) before
        # the runtime that owns this task closes its connections or the database goes away.
        await asyncio.shield(loop.run_in_executor(None, executor.shutdown))
