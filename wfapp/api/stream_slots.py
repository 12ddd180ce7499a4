"""How many live streams (SSE) one user may hold open in this process: ``WFAPP_MAX_STREAMS_PER_USER``.

Each open stream holds a ``Slot`` from when it is accepted until its body ends (or, if it never
began, until the response is dropped: a slot is kept weakly, by the stream that holds it). One
more stream than the limit is refused with ``429 too-many-streams`` before it starts, so no
user can tie up the server's connections and database reads with streams of their own.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from django.conf import settings

from wfapp.api.problems import Problem


class Slot:
    """One open stream's place among its user's."""


_lock = threading.Lock()
_open: dict[Any, weakref.WeakSet[Slot]] = {}


def take(user: Any) -> Slot:
    """A slot for a new stream of ``user``; ``Problem`` 429 when they hold the most they may."""
    limit = int(settings.WFAPP_MAX_STREAMS_PER_USER)
    with _lock:
        held = _open.setdefault(user.pk, weakref.WeakSet())
        if len(held) >= limit:
            raise Problem(
                "too-many-streams",
                f"You have {len(held)} streams open, the most one user may: close one before opening another.",
            )
        slot = Slot()
        held.add(slot)
        return slot


def give_back(user: Any, slot: Slot) -> None:
    """Free ``slot`` (its stream ended)."""
    with _lock:
        held = _open.get(user.pk)
        if held is not None:
            held.discard(slot)
            if not held:
                del _open[user.pk]
