"""Doorbells: after a commit, tell listeners *that* a session changed, never *what* changed.

Every message is ``{"type": "wfapp.doorbell", "session_id": ..., "seq": ..., "ring": ...}``
(a consumer handles it in ``wfapp_doorbell``; ``ring`` is the same in every group one ring
reaches) and goes to these groups:

- ``session_group(session_id)`` (``wfapp.session.<id>``): after every commit to that run;
- ``RUNS_GROUP`` (``wfapp.runs``): when a run is created or its status changes;
- ``INBOX_GROUP`` (``wfapp.inbox``): when an interrupt is asked, answered or withdrawn.

Listeners read what they missed from the database, so a lost doorbell loses nothing.

Notes are the one exception: ``{"type": "wfapp.note", "session_id": ..., "node_path": ...,
"note": {...}}`` to the run's group carries something that is never stored (a model's text as
it streams, ``engine.Context.publish``); a page that misses one never sees it.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
import uuid

from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

DOORBELL_TYPE = "wfapp.doorbell"
NOTE_TYPE = "wfapp.note"
INBOX_GROUP = "wfapp.inbox"
RUNS_GROUP = "wfapp.runs"
_GROUP_SAFE = re.compile(r"^[A-Za-z0-9_.-]{1,60}$")
_PROCESS = uuid.uuid4().hex[:8]
_RINGS = itertools.count(1)


def session_group(session_id: str) -> str:
    """The group that hears every commit to one run (ids unsafe for group names are hashed)."""
    if _GROUP_SAFE.match(session_id):
        return f"wfapp.session.{session_id}"
    return "wfapp.session.h" + hashlib.sha256(session_id.encode()).hexdigest()[:40]


async def ring(session_id: str, seq: int, *, runs: bool = False, inbox: bool = False) -> None:
    """Send the doorbell to the run's group, and to the runs list and inbox when they changed."""
    layer = get_channel_layer()
    if layer is None:
        return
    # One id for every group this ring reaches: a listener in several groups acts on it once.
    message = {
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
