"""Small helpers shared by the wfapp tests."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.conf import settings

from wfapp.models import Session


def embedded_only(reason: str) -> pytest.MarkDecorator:
    """Skip in workers mode (``WFAPP_RUNTIME=workers``) a test of what only embedded mode does."""
    return pytest.mark.skipif(settings.WFAPP_RUNTIME == "workers", reason=f"embedded mode only: {reason}")


async def settled(session_id: str, *statuses: str, timeout: float = 30.0) -> Session:
    """Wait until the run has one of ``statuses`` and no worker holds it; return it. (15 s ran out
    once in a full parallel suite, its status read queued on the thread Django's sync code shares.)"""
    wanted = set(statuses or ("waiting", "completed", "failed", "cancelled"))
    async with asyncio.timeout(timeout):
        while True:
            session = await Session.objects.aget(pk=session_id)
            if session.status in wanted and session.lease_owner is None:
                return session
            await asyncio.sleep(0.02)


async def jobs_done(session_id: str, timeout: float = 15.0) -> None:
    """Workers mode: wait until no advance job of the run waits or runs (a recorded answer
    queues one; in embedded mode there are none)."""
    if settings.WFAPP_RUNTIME != "workers":
        return
    from django.db import connection

    def left() -> int:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM procrastinate_jobs WHERE args->>'session_id' = %s "
                "AND status IN ('todo', 'doing')",
                [session_id],
            )
            return int(cursor.fetchone()[0])

    async with asyncio.timeout(timeout):
        while await sync_to_async(left)():
            await asyncio.sleep(0.02)


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a wfapp subprocess that uses this test's database and workflows."""
    import os

    from django.db import connection

    from tests.wfapp.flows import PATHS

    settings_dict = connection.settings_dict
    if settings_dict["ENGINE"].endswith("sqlite3"):
        url = f"sqlite:///{settings_dict['NAME']}"
    else:
        url = (
            f"postgres://{settings_dict['USER']}:{settings_dict['PASSWORD']}@{settings_dict['HOST']}:"
            f"{settings_dict['PORT'] or 5432}/{settings_dict['NAME']}"
        )
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded",
        "DATABASE_URL": url,
        "WFAPP_EXTRA_WORKFLOWS": ",".join(PATHS.values()),
        "PYTHONUNBUFFERED": "1",
    }
    env.update(extra)
    return env


def deploy(settings: Any, *versions: str) -> None:
    """Register the demos and these versions of ``tests.wfapp.versioned`` (the last listed is newest)."""
    from django.conf import settings as defaults

    from tests.wfapp.versioned import PATHS

    demos = [path for path in defaults.WFAPP_WORKFLOWS if path.startswith("wfapp.demos.")]
    settings.WFAPP_WORKFLOWS = [*demos, *(PATHS[name] for name in versions)]


def log_and_inbox() -> tuple[int, int, list[tuple[str, str]]]:
    """What an answer or a start writes besides its audit record: runs, events, inbox rows."""
    from wfapp.models import Event, Interrupt

    inbox = list(Interrupt.objects.order_by("pk").values_list("status", "answered_by"))
    return Session.objects.count(), Event.objects.count(), inbox


def last_attempt() -> int:
    from wfapp.models import AnswerAttempt

    return AnswerAttempt.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def refusals_since(pk: int) -> list[str]:
    """The outcomes of the attempts recorded after ``pk``: refusals only, each one storable."""
    from engine import limits
    from wfapp.models import AnswerAttempt, AttemptOutcome

    rows = list(AnswerAttempt.objects.filter(pk__gt=pk).order_by("pk").values("outcome", "value", "detail"))
    for row in rows:
        assert row["outcome"] != AttemptOutcome.ACCEPTED, row
        assert limits.find_breach(row["value"], max_depth=limits.READABLE_DEPTH, max_bytes=2**30) is None, row
        assert limits.find_breach(row["detail"], max_depth=1, max_bytes=2**30) is None, row
    return [row["outcome"] for row in rows]
