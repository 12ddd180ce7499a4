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

from wfapp.permissions import answer_scope
from wfapp.web import queries

TTL = 2.0
MAX_ENTRIES = 256

Doorbell = tuple[str, int]

SCOPE_TTL = 2.0  # how long a user's answer scope (the key their counts are shared under) is kept

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


def _scope(user: object) -> Hashable:
    """The user's answer scope, kept on the user object (a socket's) for ``SCOPE_TTL`` seconds."""
    now = time.monotonic()
    kept = getattr(user, "_wfapp_answer_scope", None)
    if kept is not None and now - kept[0] < SCOPE_TTL:
        cached: Hashable = kept[1]
        return cached
    scope = answer_scope(user)
    try:
        user._wfapp_answer_scope = (now, scope)  # type: ignore[attr-defined]
    except AttributeError:
        pass  # a user object that keeps nothing: computed each time
    return scope


def pending_count(user: object, doorbell: Doorbell | None = None) -> int:
    """The user's pending count; computed once per doorbell for everyone with the same scope."""
    scope = None if doorbell is None else _scope(user)
    if scope is None:
        return queries.pending_count(user)
    return _shared((doorbell, scope, "", ""), lambda: queries.pending_count(user))


def pending_matching_count(user: object, workflow: str, q: str, doorbell: Doorbell | None = None) -> int:
    """The inbox's "N pending matching" for its filters, once per doorbell and filter."""
    if not workflow and not q:
        return pending_count(user, doorbell)
    scope = None if doorbell is None else _scope(user)
    if scope is None:
        return queries.pending_matching_count(user, workflow=workflow, q=q)
    return _shared(
        (doorbell, scope, workflow, q), lambda: queries.pending_matching_count(user, workflow=workflow, q=q)
    )


def forget() -> None:
    """Drop every cached count (tests)."""
    with _lock:
        _counts.clear()
