"""Doorbells for commits made by other processes when the channel layer cannot carry them.

With the in-memory layer (the embedded profile), a run the CLI executes in its own process
rings only that process's layer. The serving process therefore polls for runs changed
recently and rings for them. It leaves out the runs this process holds and the commits it rang
for itself (``doorbell.rung_here``): each of those reached the pages already, and a second ring
is a second update of every open page. (A status change another process makes without a new
event, at a seq this process rang, is therefore not rung; every status change of a run's turn
comes with its events.) With channels-redis every process rings every other, and this is not
needed.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any

from django.utils import timezone

from wfapp.models import Session
from wfapp.store import doorbell
from wfapp.store.sql import UPDATED_AT_GRAIN

# Commits carry the time they were prepared, not the time they became visible, and an append
# leaves updated_at alone within UPDATED_AT_GRAIN of its last touch: look back further than both.
_OVERLAP = timedelta(seconds=3)
assert _OVERLAP > 2 * UPDATED_AT_GRAIN
# How often the serving process looks: what another process commits reaches open pages within
# about this long (one indexed query on updated_at each time). At the maintenance tick of one
# second, CLI actions showed up a second or more late, later still on a busy machine.
POLL_SECONDS = 0.2


class ChangeWatch:
    """Finds runs whose log or status changed since the last look."""

    def __init__(self) -> None:
        self._since = timezone.now()
        self._seen: dict[str, tuple[int, str]] = {}

    def changed(self, exclude_owner: str | None = None) -> list[Mapping[str, Any]]:
        """Runs changed since the last call (each change once), leaving out ``exclude_owner``'s."""
        now = timezone.now()
        rows = Session.objects.filter(updated_at__gte=self._since - _OVERLAP)
        if exclude_owner:
            rows = rows.exclude(lease_owner=exclude_owner)
        window: dict[str, tuple[int, str]] = {}
        fresh: list[Mapping[str, Any]] = []
        for row in rows.values("id", "last_seq", "status"):
            mark = window[row["id"]] = (row["last_seq"], row["status"])
            if self._seen.get(row["id"]) == mark:
                continue
            rung = doorbell.rung_here(row["id"])
            if rung is None or rung < row["last_seq"]:
                fresh.append(row)
        # Only runs inside the look-back window can show up again unchanged.
        self._seen = window
        self._since = now
        return fresh
