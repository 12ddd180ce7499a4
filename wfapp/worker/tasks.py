"""The procrastinate tasks: "advance run R" and the periodic sweep.

Both run inside ``manage.py wf worker`` (``wfapp.worker.process``), whose runtime holds the
leases: the advance job claims the run's lease, advances it until it waits or ends, and ends,
so a run waiting for a human holds no worker. The lease and its epoch stay the guard: a job
that finds the run leased to a live worker ends at once (the holder's release sees the new
events), and a worker whose lease was taken writes nothing.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from procrastinate.contrib.django import app

from engine import Event
from engine.events import ErrorInfo
from wfapp.errors import UnknownWorkflowError
from wfapp.models import Session
from wfapp.runs import runtime
from wfapp.runs.dispatch import ADVANCE_TASK, QUEUE, SWEEP_TASK
from wfapp.store import lease as leases
from wfapp.store.events import DjangoEventStore
from wfapp.worker import sweep as sweeping
from wfapp.worker.handback import handed_back
from wfapp.worker.schedule import SWEEP_PRIORITY, sweep_cron

logger = logging.getLogger(__name__)


@app.task(name=ADVANCE_TASK, queue=QUEUE, pass_context=False)
async def advance_run(session_id: str, retry: bool = False) -> str:
    """Advance one run until it waits or ends (or its lease is taken); say what happened."""
    if not await Session.objects.filter(pk=session_id).aexists():
        logger.info("run %s no longer exists; its job ends and writes nothing", session_id)
        return "unknown run"
    engine = runtime.current()
    try:
        result = await engine.advance_here(session_id, retry=retry)
    except asyncio.CancelledError:
        current = asyncio.current_task()
        if current is not None and current.cancelling():
            handed_back.add(session_id)  # this job is cut at shutdown: hand the run back
            raise
        result = None  # the runtime stopped the turn itself (its lease was given up or taken)
    except UnknownWorkflowError as missing:
        await fail_unregistered(session_id, engine.owner, missing.name)
        return "failed: unregistered workflow"
    finally:
        if not asyncio.current_task().cancelling():  # type: ignore[union-attr]
            await _let_go(engine, session_id)
    if result is None:
        if engine.gate.closed:
            return "cut at a node boundary: this worker is stopping and hands the run back"
        return "held by another worker, or taken over"
    return str(result.status)


async def _let_go(engine: runtime.Runtime, session_id: str) -> None:
    """Drop the run's lease if this process still holds it with no turn of its own running
    (a turn stopped between its last append and its release): the sweep takes it from there."""
    if not engine.is_advancing(session_id):
        await Session.objects.filter(pk=session_id, lease_owner=engine.owner).aupdate(
            lease_owner=None, lease_expires_at=None
        )


async def fail_unregistered(session_id: str, owner: str, workflow: str) -> None:
    """Fail a run whose workflow is no longer registered, with an error event naming it."""
    message = (
        f"The workflow {workflow!r} of this run is not registered (WFAPP_WORKFLOWS lists the "
        "registered ones); the run cannot continue"
    )
    logger.error("run %s: %s", session_id, message)
    lease = await sync_to_async(leases.claim)(
        session_id, owner, float(settings.WFAPP_LEASE_SECONDS), force=True
    )
    if lease is None:
        return
    store = DjangoEventStore(lease)
    try:
        info = await store.get_session(session_id)
        error = ErrorInfo(type="UnknownWorkflowError", message=message)
        now = time.time()
        events = [
            Event(
                seq=info.last_seq + offset,
                session_id=session_id,
                author=workflow,
                node_path=workflow,
                timestamp=now,
                error=error,
                **fields,  # type: ignore[arg-type]
            )
            for offset, fields in ((1, {"kind": "error"}), (2, {"kind": "status", "status": "failed"}))
        ]
        await store.append(session_id, events, expected_seq=info.last_seq)
    finally:
        await sync_to_async(leases.drop)(lease)


@app.periodic(cron=sweep_cron())
@app.task(name=SWEEP_TASK, queue=QUEUE, priority=SWEEP_PRIORITY, queueing_lock=SWEEP_TASK, pass_context=False)
async def sweep(timestamp: int) -> dict[str, Any]:
    """Take up what dead or stalled workers left: stalled jobs, runs needing work, old workers.

    A ``queueing_lock`` keeps one sweep waiting at most, but no ``lock``: a sweep that stalls
    (its worker died or froze) blocks nothing, the next tick's sweep runs anyway (procrastinate
    issue #1408). A process already sweeping skips the tick instead of sweeping twice.
    """
    if _sweeping.locked():
        return {"skipped": "this worker is already sweeping"}
    async with _sweeping:
        return await sweeping.sweep()


_sweeping = asyncio.Lock()
