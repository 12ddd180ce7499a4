"""Workers mode: notifications as a periodic procrastinate job (embedded, the runtime pumps them).

Any worker may take the tick; notices are written once each (their unique key) and each
delivery is claimed before it is sent, so two workers never send one twice.
"""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings
from procrastinate.contrib.django import app

from wfapp.notify.pump import pump_and_close
from wfapp.runs.dispatch import QUEUE
from wfapp.worker.schedule import every_seconds_cron

NOTIFY_TASK = "wfapp.notify"


def notify_cron() -> str:
    """Every ``WFAPP_NOTIFY_SECONDS``."""
    return every_seconds_cron(settings.WFAPP_NOTIFY_SECONDS)


@app.periodic(cron=notify_cron())
@app.task(name=NOTIFY_TASK, queue=QUEUE, queueing_lock=NOTIFY_TASK, pass_context=False)
async def notify(timestamp: int) -> int:
    """Collect notices and send the due deliveries; how many were tried."""
    return int(await sync_to_async(pump_and_close, thread_sensitive=False)())
