"""Have a run advanced: by this process's runtime (embedded) or by a queued job (workers).

``advance_later`` is called inside the transaction of the write that needs the run advanced.
In workers mode it defers the "advance run R" job in that same transaction (procrastinate's
Django connector uses Django's connection), so a committed write always has its job and a
rolled-back one never does. At most one job per run waits in the queue (its ``queueing_lock``):
a second write while one waits needs no second job, the waiting one will see it. In embedded
mode it kicks the process's runtime once the transaction commits, as the actions always did.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING, Any

from django.db import transaction

from wfapp.runs.mode import workers_mode

if TYPE_CHECKING:
    from wfapp.runs.runtime import Turn

logger = logging.getLogger(__name__)

ADVANCE_TASK = "wfapp.advance_run"
SWEEP_TASK = "wfapp.sweep"
QUEUE = "wfapp"


def run_lock(session_id: str) -> str:
    """The queueing lock of a run's advance job."""
    return f"wfapp.run.{session_id}"


@functools.cache
def _in_transaction() -> Any:
    """A job manager on Django's connection, whatever connector the app uses meanwhile (a
    worker process swaps it for a pooled one): its defers join the caller's transaction."""
    from procrastinate.contrib.django.django_connector import DjangoConnector
    from procrastinate.manager import JobManager

    return JobManager(DjangoConnector())


def defer_advance(session_id: str, *, retry: bool = False) -> bool:
    """Queue an advance job for the run in the current transaction; False if one already
    waits (nothing is written then)."""
    from procrastinate.exceptions import AlreadyEnqueued
    from procrastinate.tasks import configure_task

    deferrer = configure_task(
        name=ADVANCE_TASK, job_manager=_in_transaction(), queue=QUEUE, queueing_lock=run_lock(session_id)
    )
    try:
        # A savepoint: a refused insert must not abort the caller's transaction.
        with transaction.atomic():
            deferrer.defer(session_id=session_id, retry=retry)
    except AlreadyEnqueued:
        return False
    return True


def advance_later(session_id: str, *, retry: bool = False) -> bool:
    """Have the run advanced once the current transaction commits (see the module's docstring).

    Returns False only in workers mode, when a job for the run already waits in the queue.
    """
    if workers_mode():
        return defer_advance(session_id, retry=retry)
    from wfapp.runs import runtime

    transaction.on_commit(functools.partial(runtime.current().kick, session_id, retry=retry))
    return True


def answer_recorded(sender: Any, *, session_id: str, **kwargs: Any) -> None:
    """Receives ``wfapp.store.hooks.answer_recorded`` in the transaction that records an answer:
    workers mode queues the advance there. (In embedded mode the answering action kicks the
    runtime after the answer.)"""
    if workers_mode():
        defer_advance(session_id)


def after_answer(session_id: str) -> Turn | None:
    """Called by the answering action once an answer committed: embedded mode advances the run now in
    this process's runtime and returns that turn; None when the run advances elsewhere (workers
    mode: its job was deferred with the answer; no runtime here: the next sweep takes it up)."""
    if workers_mode():
        return None
    from wfapp.runs import runtime

    return runtime.current().kick(session_id)


async def defer_advance_async(session_id: str) -> bool:
    """``defer_advance`` outside any transaction, through the app's connector (the sweep's)."""
    from procrastinate.contrib.django import app
    from procrastinate.exceptions import AlreadyEnqueued

    deferrer = app.configure_task(ADVANCE_TASK, queue=QUEUE, queueing_lock=run_lock(session_id))
    try:
        await deferrer.defer_async(session_id=session_id, retry=False)
    except AlreadyEnqueued:
        return False
    return True
