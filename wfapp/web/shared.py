"""Values computed once per key for a short while and shared by every live socket that asks.

Live sockets handle one doorbell at the same moment, in several threads: the first to ask for a
key computes it while the others wait for its value, instead of each computing its own. Entries
expire after ``ttl`` seconds; the oldest go first when ``MAX_ENTRIES`` are kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

MAX_ENTRIES = 1024

_lock = threading.Lock()
_values: dict[Hashable, tuple[float, Any]] = {}
_computing: dict[Hashable, threading.Lock] = {}


def _kept(key: Hashable, ttl: float) -> tuple[bool, Any]:
    with _lock:
        hit = _values.get(key)
    if hit is not None and time.monotonic() - hit[0] < ttl:
        return True, hit[1]
    return False, None


def peek(key: Hashable, ttl: float) -> tuple[bool, Any]:
    """``(True, value)`` when a value for ``key`` younger than ``ttl`` is kept, else ``(False,
    None)``; never computes, never waits, never queries (an event loop may ask)."""
    return _kept(key, ttl)


def shared[T](key: Hashable, compute: Callable[[], T], ttl: float) -> T:
    """The value kept for ``key``, or ``compute()`` once while the callers after it wait."""
    found, value = _kept(key, ttl)
    if found:
        return value  # type: ignore[no-any-return]
    with _lock:
        computing = _computing.setdefault(key, threading.Lock())
    with computing:
        found, value = _kept(key, ttl)
        if not found:
            value = compute()
            now = time.monotonic()
            with _lock:
                if len(_values) >= MAX_ENTRIES:
                    stale = [k for k, (at, _) in _values.items() if now - at >= ttl] or list(_values)[:1]
                    for old in stale:
                        del _values[old]
                _values[key] = (now, value)
    with _lock:
        _computing.pop(key, None)
    return value  # type: ignore[no-any-return]


def forget() -> None:
    """Drop every kept value (tests)."""
    with _lock:
        _values.clear()
