"""The periodic job that fires the human steps' clocks in scaled mode (``wfapp.runs.timers``).

Every ``WFAPP_SWEEP_SECONDS`` one worker records the reminders, escalations and deadlines
that are due. Two of these jobs running at once (two workers, a stalled one) still record one
default answer per question: each write is conditional on the run's log position.
"""

from __future__ import annotations

from typing import Any

from procrastinate.contrib.django import app

from wfapp.runs import timers
from wfapp.runs.dispatch import QUEUE
from wfapp.worker.schedule import SWEEP_PRIORITY, sweep_cron

DEADLINES_TASK = "wfapp.deadlines"


@app.periodic(cron=sweep_cron())
@app.task(
    name=DEADLINES_TASK,
    queue=QUEUE,
    priority=SWEEP_PRIORITY,
    queueing_lock=DEADLINES_TASK,
    pass_context=False,
)
async def fire_deadlines(timestamp: int) -> dict[str, Any]:
    """Record what the clocks of pending questions say is due; name the runs given an answer."""
    return {"answered": await timers.fire_due()}
