"""Which runtime mode this process is in, and whether its configuration can run it."""

from __future__ import annotations

from django.conf import settings
from django.db import connection


class WorkersMisconfigured(Exception):
    """The scaled mode cannot run with these settings (the message says what to set)."""


def workers_mode() -> bool:
    """True when runs execute in worker processes (``WFAPP_RUNTIME=workers``)."""
    return bool(settings.WFAPP_RUNTIME == "workers")


def check_workers_config(*, needs_workers_mode: bool = True) -> None:
    """Raise ``WorkersMisconfigured`` unless this process can take part in the scaled mode."""
    if needs_workers_mode and not workers_mode():
        raise WorkersMisconfigured(
            "Worker processes need WFAPP_RUNTIME=workers (set it for the serving processes too, "
            "so that they hand runs to the workers instead of executing them)."
        )
    if connection.vendor != "postgresql":
        raise WorkersMisconfigured(
            "WFAPP_RUNTIME=workers needs PostgreSQL: set DATABASE_URL=postgres://USER@HOST:5432/DBNAME "
            f"(the database is {connection.vendor} now)."
        )
