"""The clock of human steps: reminders, escalations and deadlines that are due, recorded once.

``fire_due`` finds the pending questions whose ``timer_at`` has passed and has the engine
record what is due on each run (``Runner.fire_timers``): a reminder or an escalation (an
``assignment`` event), or at the deadline the default answer (or a time-out) by the actor
``deadline``. The append is conditional on the run's ``last_seq``, so when two processes fire
at once one writes and the other, reading the log again, finds nothing left to do: exactly one
default answer. A run given an answer is advanced like any answered run. Embedded mode calls it
from the runtime's maintenance, scaled mode from a periodic job (``wfapp.worker.deadlines``).
"""

from __future__ import annotations

import logging

from asgiref.sync import sync_to_async
from django.utils import timezone

from engine import Runner
from wfapp.errors import UnknownWorkflowError, VersionNotDeployedError
from wfapp.models import Interrupt, InterruptStatus, Session
from wfapp.registry import get_workflow
from wfapp.store.cache import FOLDED
from wfapp.store.events import DjangoEventStore

logger = logging.getLogger(__name__)

BATCH = 200  # runs looked at per call; the next call takes the rest


def _due_runs() -> list[tuple[str, str, str]]:
    rows = (
        Interrupt.objects.filter(status=InterruptStatus.PENDING, timer_at__lte=timezone.now())
        .order_by("timer_at")
        .values_list("session_id", flat=True)[: BATCH * 4]
    )
    ids = list(dict.fromkeys(rows))[:BATCH]
    found = Session.objects.filter(pk__in=ids).values_list("pk", "workflow", "version")
    return [(pk, workflow, version) for pk, workflow, version in found]


async def fire_due() -> list[str]:
    """Record what is due on every run with a question whose clock has passed; return the runs
    that got a default answer (or a time-out). Workers mode queued their advance jobs with the
    answers; the embedded runtime advances them itself (``Runtime.sweep``)."""
    answered = []
    for session_id, workflow, version in await sync_to_async(_due_runs)():
        try:
            runner = Runner(get_workflow(workflow, version or None), store=DjangoEventStore(), folded=FOLDED)
            fired = await runner.fire_timers(session_id)
        except (UnknownWorkflowError, VersionNotDeployedError) as missing:
            logger.info("the deadline of run %s waits: %s", session_id, missing)
            continue
        except Exception:
            logger.exception("the deadline of run %s could not be recorded; trying again later", session_id)
            continue
        if any(event.kind == "answer" for event in fired):
            answered.append(session_id)  # workers mode queued the advance with the answer
    return answered
