"""Small helpers shared by the wfapp tests."""

from __future__ import annotations

import asyncio
from typing import Any

from wfapp.models import Session


async def settled(session_id: str, *statuses: str, timeout: float = 15.0) -> Session:
    """Wait until the run has one of ``statuses`` and no worker holds it; return it."""
    wanted = set(statuses or ("waiting", "completed", "failed", "cancelled"))
    async with asyncio.timeout(timeout):
        while True:
            session = await Session.objects.aget(pk=session_id)
            if session.status in wanted and session.lease_owner is None:
                return session
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
