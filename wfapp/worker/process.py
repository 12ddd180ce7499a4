"""One worker process (``manage.py wf worker``): a procrastinate worker executing runs.

The process's runtime (``wfapp.runs.runtime.Runtime``, named for this process: ``host:pid:token``)
holds and renews the leases of the runs its jobs advance; procrastinate fetches the jobs
(LISTEN/NOTIFY, with polling as a fallback) and runs up to ``concurrency`` of them at once.

Stopping (SIGTERM or SIGINT) drains: no new job is fetched and no new node starts; the nodes
executing get up to ``WFAPP_WORKER_GRACE_SECONDS`` to finish and record their outcome, and then
each turn still running is cut at that node boundary (``Runtime.drain``) and handed back with a
fresh job, so another worker continues it at once. Only a node still executing when the grace
is over is cut short (it runs again where the run resumes). The process never hangs: a database
unreachable for ``WFAPP_WORKER_DB_TIMEOUT`` seconds makes it exit non-zero for its supervisor
to restart it, and a shutdown that overruns its grace by ``_SHUTDOWN_MARGIN`` seconds ends the
process the hard way (procrastinate issues #1334, #1513).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Sequence
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from wfapp.runs import runtime
from wfapp.runs.dispatch import defer_advance_async
from wfapp.runs.mode import check_workers_config
from wfapp.store import doorbell
from wfapp.store import lease as leases
from wfapp.worker.handback import handed_back

logger = logging.getLogger(__name__)

EXIT_DATABASE_LOST = 75  # EX_TEMPFAIL: restart me
EXIT_SHUTDOWN_HUNG = 70
_SHUTDOWN_MARGIN = 10.0
# procrastinate cancels the jobs still running this long after the drain's grace (a backstop:
# the drain has cut their turns by then, so the jobs end on their own).
_JOBS_MARGIN = 5.0
_DB_PROBE_SECONDS = 2.0


def register_tasks() -> None:
    """Import every module whose tasks a worker runs: runs and the sweep, the human steps'
    deadlines, notifications (each registers its tasks and periodic jobs on import)."""
    from wfapp.worker import deadlines, notify_tasks, tasks  # noqa: F401


def db_timeout() -> float:
    return float(os.environ.get("WFAPP_WORKER_DB_TIMEOUT", "15"))


def run(*, concurrency: int, queues: Sequence[str] | None, announce: Any) -> int:
    """Run a worker until it is told to stop; return the process's exit status."""
    check_workers_config()
    register_tasks()

    owner = leases.new_owner()
    announce(
        f"wfapp worker {owner}: executing runs, {concurrency} at a time, "
        f"queues {', '.join(queues) if queues else 'all'} (SIGTERM drains; "
        f"grace {settings.WFAPP_WORKER_GRACE_SECONDS:g} s)"
    )
    if doorbell.process_local():
        announce(
            "REDIS_URL is not set: pages served by other processes learn of this worker's "
            "changes only by polling; set REDIS_URL for live updates across processes"
        )
    return asyncio.run(_main(owner, concurrency, list(queues) if queues else None))


def _build(owner: str, concurrency: int, queues: list[str] | None) -> tuple[runtime.Runtime, Any, Any]:
    """The runtime that holds this process's leases, and a procrastinate worker feeding it jobs."""
    from procrastinate import worker as workers
    from procrastinate.contrib.django import app

    ttl = float(settings.WFAPP_LEASE_SECONDS)
    engine = runtime.Runtime(owner=owner, sweep=False, watch=False)
    worker = workers.Worker(
        app=app,
        queues=queues,
        name=owner,
        concurrency=concurrency,
        shutdown_graceful_timeout=float(settings.WFAPP_WORKER_GRACE_SECONDS) + _JOBS_MARGIN,
        install_signal_handlers=False,
        update_heartbeat_interval=max(1.0, ttl / 3),
        stalled_worker_timeout=ttl,
        delete_jobs="successful",
    )
    return engine, worker, app.connector.get_worker_connector()  # type: ignore[attr-defined]


@contextlib.asynccontextmanager
async def running_worker(
    concurrency: int = 10, queues: list[str] | None = None
) -> AsyncIterator[runtime.Runtime]:
    """A worker in the running event loop, for as long as the block lasts (tests use it)."""
    from procrastinate.contrib.django import app

    register_tasks()

    engine, worker, connector = _build(leases.new_owner(), concurrency, queues)
    previous = runtime.current()
    runtime.install(engine)
    with app.replace_connector(connector):
        await connector.open_async()
        await engine.start()
        running = asyncio.ensure_future(worker.run())
        try:
            yield engine
        finally:
            worker.stop()
            await running
            await engine.stop()
            await connector.close_async()
            runtime.install(previous)


async def _main(owner: str, concurrency: int, queues: list[str] | None) -> int:
    from procrastinate.contrib.django import app

    grace = float(settings.WFAPP_WORKER_GRACE_SECONDS)
    engine, worker, connector = _build(owner, concurrency, queues)
    runtime.install(engine)
    status = 0
    with app.replace_connector(connector):
        await connector.open_async()
        stopping = _Stopper(worker, engine, grace)
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(signum, stopping.stop, f"signal {signal.Signals(signum).name}")
        await engine.start()
        probe = asyncio.ensure_future(_probe_database(connector, stopping))
        try:
            await worker.run()
        except Exception:
            logger.exception("worker %s failed; exiting", owner)
            stopping.stop("worker failure", status=1)
        finally:
            probe.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await probe
            if stopping.drained is not None:
                cut = await stopping.drained
                if cut:
                    logger.info("worker %s: %d runs cut at a node boundary, handed back", owner, len(cut))
                handed_back.update(cut)
        status = stopping.status
        try:
            async with asyncio.timeout(_SHUTDOWN_MARGIN):
                await engine.stop()  # drops this process's leases
                for session_id in sorted(handed_back):
                    await defer_advance_async(session_id)
                await connector.close_async()
        except Exception:
            logger.exception("worker %s could not hand its runs back; their leases expire", owner)
            status = status or 1
    stopping.done()
    logger.info("worker %s stopped (exit status %d)", owner, status)
    return status


class _Stopper:
    """Drains the runtime and stops the worker once; ends the process if that overruns the grace
    by ``_SHUTDOWN_MARGIN`` seconds."""

    def __init__(self, worker: Any, engine: runtime.Runtime, grace: float) -> None:
        self.worker = worker
        self.engine = engine
        self.grace = grace
        self.status = 0
        self.drained: asyncio.Future[list[str]] | None = None  # the runs cut by the drain
        self._timer: threading.Timer | None = None

    def stop(self, why: str, *, status: int = 0) -> None:
        """Begin stopping (in the worker's event loop)."""
        self.status = self.status or status
        if self._timer is not None:
            return
        logger.info("worker %s stopping (%s)", self.worker.worker_name, why)
        self._timer = threading.Timer(self.grace + _SHUTDOWN_MARGIN, self._hung)
        self._timer.daemon = True
        self._timer.start()
        self.drained = asyncio.ensure_future(self.engine.drain(self.grace))
        self.worker.stop()

    def _hung(self) -> None:
        logger.error("worker shutdown overran its grace by %.0f s; exiting", _SHUTDOWN_MARGIN)
        logging.shutdown()
        os._exit(self.status or EXIT_SHUTDOWN_HUNG)

    def done(self) -> None:
        if self._timer is not None:
            self._timer.cancel()


async def _probe_database(connector: Any, stopping: _Stopper) -> None:
    """Exit non-zero when the database stays unreachable (a supervisor restarts the worker)."""
    loop = asyncio.get_running_loop()
    last_ok = loop.time()
    while True:
        await asyncio.sleep(_DB_PROBE_SECONDS)
        try:
            async with asyncio.timeout(_DB_PROBE_SECONDS * 2):
                await connector.execute_query_one_async("SELECT 1 AS ok")
                await sync_to_async(_django_ping)()
            last_ok = loop.time()
        except Exception as error:
            down = loop.time() - last_ok
            logger.warning("database unreachable for %.0f s: %s", down, error)
            if down >= db_timeout():
                logger.error("database unreachable for %.0f s; exiting for a restart", down)
                stopping.stop("database lost", status=EXIT_DATABASE_LOST)
                return


def _django_ping() -> None:
    from django.db import connection

    connection.close_if_unusable_or_obsolete()
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
