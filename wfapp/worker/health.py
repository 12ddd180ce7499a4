"""Health and status for probes and operators: ``wf health``, ``wf workers``, ``/healthz``."""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_GET

from wfapp.models import Session
from wfapp.runs.dispatch import QUEUE
from wfapp.store import lease as leases

logger = logging.getLogger(__name__)


def _ping() -> str | None:
    """None when the database answers, else what went wrong."""
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError as error:
        return f"{type(error).__name__}: {error}".strip()
    return None


def _queue_rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return list(cursor.fetchall())


def workers_report() -> dict[str, Any]:
    """Which worker holds which run (the leases), and procrastinate's workers and their jobs."""
    held = (
        Session.objects.filter(lease_owner__isnull=False)
        .exclude(lease_owner="")
        .order_by("lease_owner", "id")
        .values("id", "workflow", "status", "lease_owner", "lease_epoch", "lease_expires_at")
    )
    owners: dict[str, list[dict[str, Any]]] = {}
    for row in held:
        owner = str(row["lease_owner"])
        owners.setdefault(owner, []).append(
            {
                "run": row["id"],
                "workflow": row["workflow"],
                "status": row["status"],
                "epoch": row["lease_epoch"],
                "lease_expires_at": row["lease_expires_at"],
                "owner_gone": leases.owner_is_gone(owner),
            }
        )
    report: dict[str, Any] = {
        "runtime": settings.WFAPP_RUNTIME,
        "leases": [{"worker": owner, "runs": runs} for owner, runs in owners.items()],
    }
    if connection.vendor == "postgresql" and settings.WFAPP_RUNTIME == "workers":
        now = timezone.now()
        workers = _queue_rows("SELECT id, last_heartbeat FROM procrastinate_workers ORDER BY id", [])
        doing = _queue_rows(
            "SELECT id, worker_id, task_name, args->>'session_id' FROM procrastinate_jobs "
            "WHERE status = 'doing' AND queue_name = %s ORDER BY id",
            [QUEUE],
        )
        report["queue"] = {
            "workers": [
                {
                    "id": worker_id,
                    "last_heartbeat": beat,
                    "heartbeat_age_seconds": round((now - beat).total_seconds(), 1),
                    "jobs": [
                        {"job": job, "task": task, "run": run}
                        for job, wid, task, run in doing
                        if wid == worker_id
                    ],
                }
                for worker_id, beat in workers
            ],
            "jobs_without_worker": [
                {"job": job, "task": task, "run": run} for job, wid, task, run in doing if wid is None
            ],
        }
    return report


def health_report(*, require_workers: bool = False) -> dict[str, Any]:
    """Database reachable, migrations applied, and in workers mode: live workers and queue depth
    (with ``require_workers``, no live worker is a problem)."""
    problems: list[str] = []
    report: dict[str, Any] = {"runtime": settings.WFAPP_RUNTIME, "database": connection.vendor}
    failure = _ping()
    if failure is not None:
        return {**report, "healthy": False, "problems": [f"database unreachable: {failure}"]}
    executor = MigrationExecutor(connection)
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        problems.append(f"{len(pending)} migrations not applied: run manage.py migrate")
    if settings.WFAPP_RUNTIME == "workers" and connection.vendor == "postgresql" and not problems:
        fresh = timezone.now() - timedelta(seconds=float(settings.WFAPP_LEASE_SECONDS))
        (live,), *_ = _queue_rows(
            "SELECT count(*) FROM procrastinate_workers WHERE last_heartbeat >= %s", [fresh]
        )
        (queued,), *_ = _queue_rows(
            "SELECT count(*) FROM procrastinate_jobs WHERE status = 'todo' AND queue_name = %s", [QUEUE]
        )
        report.update(live_workers=live, queued_jobs=queued)
        if require_workers and not live:
            problems.append("no live worker: start manage.py wf worker")
    return {**report, "healthy": not problems, "problems": problems}


@login_not_required
@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and probes: 200 when this process reaches its database, else 503."""
    failure = _ping()
    if failure is not None:
        # The error's text (a host, a user name, a path) is for the operators' log, not the world.
        logger.warning("healthz: database unreachable: %s", failure)
    body = {"runtime": settings.WFAPP_RUNTIME, "database": "ok" if failure is None else "unavailable"}
    return JsonResponse(body, status=200 if failure is None else 503)
