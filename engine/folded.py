"""Sessions' logs as their last turn left them folded, so the next load folds only what is new.

A resume used to read and fold the whole log and walk it for the replay check: work that grows
with the history (W6s: a thousand events by the last resume). Logs are append-only, so an index
folded up to ``last_seq`` stays right; the next load reads only the events after it, which also
brings in whatever another process appended meanwhile. A kept index is used again only

- by a runner of the same workflow object (the replay check it passed holds for that code),
- for the session created at the same moment (not one deleted and made again under its id),
- when the log is at least as long as what was folded, and
- when what was appended since asks nothing of the replay check: answers, decisions on
  questions, comments, status changes. Anything else (another process ran nodes) means a full
  read and check.

An index is taken out while a load uses it, so two loads never share one, and put back when
the turn or the answer that used it has ended; past ``max_runs`` the least recently kept goes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

from .replay import ReplayIndex
from .store import SessionInfo

MAX_RUNS = 256

# Events that change no node's record in a way the replay check looks at.
UNCHECKED_KINDS = frozenset({"answer", "assignment", "comment", "status"})


class FoldedLogs:
    """Session id -> the index its last turn left; safe to share between a process's runners."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.max_runs = max_runs
        self._kept: OrderedDict[str, tuple[Any, float, ReplayIndex]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._kept)

    def take(self, workflow: Any, info: SessionInfo) -> ReplayIndex | None:
        """The kept index of ``info``'s session if it still applies (taken out), else None."""
        with self._lock:
            kept = self._kept.pop(info.session_id, None)
        if kept is None:
            return None
        kept_workflow, created_at, index = kept
        if kept_workflow is not workflow or created_at != info.created_at or index.last_seq > info.last_seq:
            return None
        return index

    def keep(self, workflow: Any, info: SessionInfo, index: ReplayIndex) -> None:
        with self._lock:
            self._kept[info.session_id] = (workflow, info.created_at, index)
            self._kept.move_to_end(info.session_id)
            while len(self._kept) > self.max_runs:
                self._kept.popitem(last=False)

    def drop(self, session_id: str) -> None:
        with self._lock:
            self._kept.pop(session_id, None)
