"""Doorbells: after a commit, tell listeners *that* a session changed, never *what* changed.

Every message is ``{"type": "wfapp.doorbell", "session_id": ..., "seq": ..., "ring": ...,
"counts": ...}`` (a consumer handles it in ``wfapp_doorbell``; ``ring`` is the same in every
group one ring reaches; ``counts`` numbers the rings this process sent to the runs list and the
inbox, ``{group: n}``, so a listener that finds a number skipped knows the layer dropped a
doorbell on its way: ``wfapp.web.live.behind``) and goes to these groups:

- ``session_group(session_id)`` (``wfapp.session.<id>``): after every commit to that run;
- ``RUNS_GROUP`` (``wfapp.runs``): when a run is created or its status changes;
- ``INBOX_GROUP`` (``wfapp.inbox``): when an interrupt is asked, answered or withdrawn.

Listeners read what they missed from the database, so a lost doorbell loses nothing.

Each process remembers the last seq it rang for each run (``rung_here``), so the change watch
(``wfapp.store.watch``), which rings for other processes' commits, does not ring this one's again.

Notes are the one exception: ``{"type": "wfapp.note", "session_id": ..., "node_path": ...,
"note": {...}}`` to the run's group carries something that is never stored (a model's text as
it streams, ``engine.Context.publish``); a page that misses one never sees it.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import logging
import re
import threading
import uuid
import weakref
from collections import OrderedDict
from typing import Any

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

DOORBELL_TYPE = "wfapp.doorbell"
NOTE_TYPE = "wfapp.note"
INBOX_GROUP = "wfapp.inbox"
RUNS_GROUP = "wfapp.runs"
_GROUP_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,60}$")
_PROCESS = uuid.uuid4().hex[:8]
_RINGS = itertools.count(1)
PROCESS = _PROCESS
_COUNTED = (RUNS_GROUP, INBOX_GROUP)  # the groups every open page hears, numbered per process
_GROUP_RINGS = {group: itertools.count(1) for group in _COUNTED}
_GROUP_RUNG = dict.fromkeys(_COUNTED, 0)
# The last seq this process rang for each recently rung run (the oldest are forgotten: the watch
# looks only a few seconds back, and a run it sees again rings at most once more).
_RUNG: OrderedDict[str, int] = OrderedDict()
_RUNG_KEPT = 10_000
_RUNG_LOCK = threading.Lock()


def process_local() -> bool:
    """Whether doorbells reach only this process's pages (the in-memory channel layer of the
    embedded profile), so other processes' commits are found by polling (``watch``)."""
    from channels.layers import InMemoryChannelLayer

    return isinstance(get_channel_layer(), InMemoryChannelLayer)


def session_group(session_id: str) -> str:
    """The group that hears every commit to one run (ids unsafe for group names are hashed)."""
    if _GROUP_SAFE.match(session_id):
        return f"wfapp.session.{session_id}"
    return "wfapp.session.h" + hashlib.sha256(session_id.encode()).hexdigest()[:40]


def rung_here(session_id: str) -> int | None:
    """The highest seq this process rang for the run lately (None: none it remembers)."""
    with _RUNG_LOCK:
        return _RUNG.get(session_id)


def rung_counts() -> dict[str, int]:
    """How many rings this process sent to each numbered group so far (see ``counts``)."""
    return dict(_GROUP_RUNG)


def _remember(session_id: str, seq: int) -> None:
    with _RUNG_LOCK:
        _RUNG[session_id] = max(seq, _RUNG.pop(session_id, seq))
        if len(_RUNG) > _RUNG_KEPT:
            _RUNG.popitem(last=False)


async def ring(session_id: str, seq: int, *, runs: bool = False, inbox: bool = False) -> None:
    """Send the doorbell to the run's group, and to the runs list and inbox when they changed."""
    _remember(session_id, seq)
    layer = get_channel_layer()
    if layer is None:
        return
    # One id for every group this ring reaches: a listener in several groups acts on it once.
    message: dict[str, Any] = {
        "type": DOORBELL_TYPE,
        "session_id": session_id,
        "seq": seq,
        "ring": f"{_PROCESS}-{next(_RINGS)}",
    }
    groups = [session_group(session_id)]
    if runs:
        groups.append(RUNS_GROUP)
    if inbox:
        groups.append(INBOX_GROUP)
    if len(groups) == 1:
        await _send(layer, groups, message)
        return
    # Numbered rings go out in their numbers' order: two rings sent at once through a layer
    # that awaits the network (Redis) could otherwise arrive swapped, and a socket that hears
    # ring n+1 before ring n takes n for lost and reloads its whole list.
    async with _in_order():
        message["counts"] = counts = {group: next(_GROUP_RINGS[group]) for group in groups[1:]}
        await _send(layer, groups, message)
        # Counted as rung once in every listener's queue: a socket's check (``behind``) compares
        # what it heard with these, and a check sent while this ring was still on its way (the
        # in-memory layer delivers a group's messages in tasks of their own) would overtake it
        # and take the socket for one that lost it.
        for group, n in counts.items():
            _GROUP_RUNG[group] = max(n, _GROUP_RUNG[group])


_ORDER: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = weakref.WeakKeyDictionary()


def _in_order() -> asyncio.Lock:
    """This event loop's lock for sending numbered rings one after another."""
    loop = asyncio.get_running_loop()
    lock = _ORDER.get(loop)
    if lock is None:
        lock = _ORDER[loop] = asyncio.Lock()
    return lock


async def _send(layer: Any, groups: list[str], message: dict[str, Any]) -> None:
    for group in groups:
        try:
            await layer.group_send(group, message)
        except Exception:
            # The commit already happened; a listener that misses this catches up on its next read.
            logger.warning("doorbell to %s failed", group, exc_info=True)


async def publish(session_id: str, node_path: str, note: dict[str, object]) -> None:
    """Send an ephemeral note from ``node_path`` to the run's live pages (nothing is stored)."""
    layer = get_channel_layer()
    if layer is None:
        return
    message = {"type": NOTE_TYPE, "session_id": session_id, "node_path": node_path, "note": note}
    try:
        await layer.group_send(session_group(session_id), message)
    except Exception:
        logger.warning("note to %s failed", session_group(session_id), exc_info=True)
