"""Pending counts shared by every live page that hears the same doorbell.

One doorbell reaches every open inbox, run page and runs list; each wants the same "N pending"
number. Counting once per doorbell (and per filter) instead of once per socket keeps an event's
cost flat however many pages are open. A doorbell is identified by its `(session_id, seq)`:
each commit rings with a new one, so a cached count never outlives the state it counted. Entries
also expire after `TTL` seconds, in case a status change rings again with the same seq.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable

from wfapp.permissions import can_answer
from wfapp.web import queries

TTL = 2.0
MAX_ENTRIES = 256

Doorbell = tuple[str, int]

_lock = threading.Lock()
_counts: dict[Hashable, tuple[float, int]] = {}


def _shared(key: Hashable, compute: Callable[[], int]) -> int:
    now = time.monotonic()
    with _lock:
        hit = _counts.get(key)
        if hit is not None and now - hit[0] < TTL:
            return hit[1]
    value = compute()
    with _lock:
        if len(_counts) >= MAX_ENTRIES:
            for stale in [k for k, (at, _) in _counts.items() if now - at >= TTL] or list(_counts)[:1]:
                del _counts[stale]
        _counts[key] = (now, value)
    return value


def pending_count(user: object, doorbell: Doorbell | None = None) -> int:
    """The user's pending count; computed once per doorbell for everyone who may answer."""
    if doorbell is None or not can_answer(user):
        return queries.pending_count(user)
    return _shared((doorbell, "", ""), lambda: queries.pending_count(user))


def pending_matching_count(user: object, workflow: str, q: str, doorbell: Doorbell | None = None) -> int:
    """The inbox's "N pending matching" for its filters, once per doorbell and filter."""
    if not workflow and not q:
        return pending_count(user, doorbell)
    if doorbell is None or not can_answer(user):
        return queries.pending_matching_count(user, workflow=workflow, q=q)
    return _shared(
        (doorbell, workflow, q), lambda: queries.pending_matching_count(user, workflow=workflow, q=q)
    )


def forget() -> None:
    """Drop every cached count (tests)."""
    with _lock:
        _counts.clear()
