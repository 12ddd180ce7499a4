"""The periodic sweep: take up what dead or stalled workers left behind.

procrastinate does not retry the jobs of a worker that died (its issue #740); the sweep does,
in four steps, each safe to run twice or concurrently with another sweep:

1. stalled jobs (their worker's heartbeat is older than the lease): marked failed; an advance
   job's run gets a fresh job (one waits per run at most; the lease decides who executes it);
2. runs needing work that no live worker holds (left ``running``, answered while nobody
   executed them) and that have no job waiting: each gets a job;
3. settled runs still leased to a worker that died before its release are freed;
4. workers without a heartbeat for that long are removed from procrastinate's list;
5. the API's expired ``Idempotency-Key`` records are purged (``wfapp.api.idempotency``).

A stalled sweep job is simply marked failed: the next tick's sweep does the work.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from wfapp.models import RunStatus, Session
from wfapp.runs.dispatch import ADVANCE_TASK, QUEUE, defer_advance_async
from wfapp.store import idempotency
from wfapp.store import lease as leases

logger = logging.getLogger(__name__)


async def _runs_with_jobs(connector: Any) -> set[str]:
    """Runs whose advance job waits in the queue (a running job may belong to a dead worker whose
    heartbeat is not stale yet: its run gets a job at once, the lease decides who executes it)."""
    rows = await connector.execute_query_all_async(
        "SELECT DISTINCT args->>'session_id' AS run FROM procrastinate_jobs "
        "WHERE status = 'todo' AND task_name = %(task)s",
        task=ADVANCE_TASK,
    )
    return {row["run"] for row in rows}


async def sweep() -> dict[str, Any]:
    """One sweep (see the module's docstring); returns what it did, for the job's result."""
    from procrastinate import jobs
    from procrastinate.contrib.django import app

    stale_after = float(settings.WFAPP_LEASE_SECONDS)
    manager = app.job_manager
    stalled = list(await manager.get_stalled_jobs(queue=QUEUE, seconds_since_heartbeat=stale_after))
    requeued = 0
    for job in stalled:
        assert job.id is not None
        try:
            await manager.finish_job_by_id_async(job.id, status=jobs.Status.FAILED, delete_job=False)
        except Exception:
            logger.info("stalled job %s ended meanwhile", job.id, exc_info=True)
            continue
        run = job.task_kwargs.get("session_id")
        if job.task_name == ADVANCE_TASK and isinstance(run, str):
            requeued += await defer_advance_async(run)
    queued = 0
    busy = await _runs_with_jobs(app.connector)
    for session_id in await sync_to_async(leases.runs_needing_work)():
        if session_id not in busy:
            queued += await defer_advance_async(session_id)
    cleared = await sync_to_async(clear_stale_leases)()
    pruned = await manager.prune_stalled_workers(stale_after)
    purged = await sync_to_async(idempotency.purge_expired)()
    if stalled or queued or cleared or pruned:
        logger.info(
            "sweep: %d stalled jobs (%d runs requeued), %d runs queued, %d stale leases cleared, "
            "%d dead workers removed",
            len(stalled),
            requeued,
            queued,
            cleared,
            len(pruned),
        )
    return {
        "stalled_jobs": len(stalled),
        "requeued": requeued,
        "queued": queued,
        "stale_leases": cleared,
        "pruned_workers": len(pruned),
        "purged_idempotency_keys": purged,
    }


def clear_stale_leases() -> int:
    """Free settled runs whose worker died between its last append and its release (a database
    outage, a kill): nothing is left to do on them, but their lease would show them as held."""
    return Session.objects.filter(
        status__in=(RunStatus.WAITING, RunStatus.COMPLETED, RunStatus.FAILED, RunStatus.CANCELLED),
        last_seq__lte=F("settled_seq"),
        lease_owner__isnull=False,
        lease_expires_at__lt=timezone.now(),
    ).update(lease_owner=None, lease_expires_at=None)
