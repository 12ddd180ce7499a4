"""Runs whose turn was cut at shutdown: their advance jobs (``wfapp.worker.tasks``) add them,
the process (``wfapp.worker.process``) hands them back once the leases are dropped."""

from __future__ import annotations

handed_back: set[str] = set()
