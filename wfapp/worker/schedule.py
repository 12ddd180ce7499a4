"""When the periodic jobs run: crons from the settings' seconds, and the sweep's priority."""

from __future__ import annotations

from django.conf import settings

# Sweeps come before advances: a worker full of runs still takes up the runs of a dead one.
SWEEP_PRIORITY = 10


def every_seconds_cron(seconds: float) -> str:
    """Every ``seconds`` (whole seconds, at least one), as a six-field cron."""
    whole = max(1, round(float(seconds)))
    return f"* * * * * */{whole}" if whole < 60 else f"*/{max(1, whole // 60)} * * * *"


def sweep_cron() -> str:
    """Every ``WFAPP_SWEEP_SECONDS``."""
    return every_seconds_cron(settings.WFAPP_SWEEP_SECONDS)
