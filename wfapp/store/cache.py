"""The parsed logs of active runs, kept between turns so a resume reads only what is new.

A resume folds the whole log; reading and parsing it from the database cost three to five
times the fold itself (7 µs an event). Logs are append-only, so a log read once stays right:
the next read asks the database only for the events after the last one kept (``seq >``),
which also picks up whatever another process appended meanwhile. Each read checks the session row first
(one small query): a row created at another moment (the session was deleted and made again)
or with fewer events than kept drops the kept log, and when the row's ``last_seq`` is what is
kept, no event is read at all. A log is dropped when its run closes and, past ``MAX_RUNS``,
the least recently used goes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any

from engine import Event, FoldedLogs

MAX_RUNS = 256


class _Log:
    __slots__ = ("created_at", "events")

    def __init__(self, created_at: Any, events: list[Event]) -> None:
        self.created_at = created_at
        self.events = events


class LogCache:
    """Session id -> its events in seq order (seq n at index n - 1); safe across threads."""

    def __init__(self, max_runs: int = MAX_RUNS) -> None:
        self.max_runs = max_runs
        self._logs: OrderedDict[str, _Log] = OrderedDict()
        self._lock = threading.Lock()

    def read(
        self,
        session_id: str,
        after_seq: int,
        row: tuple[Any, int] | None,
        fetch: Callable[[int], list[Event]],
    ) -> list[Event]:
        """The events after ``after_seq``: those kept, plus ``fetch(seq)`` of the ones after them.

        ``row`` is the session row's ``(created_at, last_seq)`` as just read (None: no row).
        """
        with self._lock:
            log = self._logs.get(session_id)
            if log is not None and (row is None or log.created_at != row[0] or len(log.events) > row[1]):
                del self._logs[session_id]  # not the log of this session any more
                log = None
            kept = len(log.events) if log is not None else 0
        if log is None or after_seq > kept:
            fresh = fetch(after_seq)
            if log is None and after_seq == 0 and row is not None:
                self._keep(session_id, row[0], fresh)
            return fresh
        assert row is not None
        newer = fetch(kept) if kept < row[1] else []
        with self._lock:
            events = log.events[after_seq:kept] + newer
            if self._logs.get(session_id) is log and len(log.events) == kept:
                log.events.extend(newer)
                self._logs.move_to_end(session_id)
        return events

    def appended(self, session_id: str, expected_seq: int, events: Sequence[Event]) -> None:
        """Keep what this process just committed, when it follows what is kept."""
        with self._lock:
            log = self._logs.get(session_id)
            if log is None:
                return
            if len(log.events) != expected_seq or any(not event.timestamp for event in events):
                del self._logs[session_id]  # the database has others' events, or ones it stamped
                return
            log.events.extend(events)

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._logs.pop(session_id, None)

    def _keep(self, session_id: str, created_at: Any, events: list[Event]) -> None:
        if events and events[0].seq != 1:
            return
        with self._lock:
            if session_id not in self._logs:
                self._logs[session_id] = _Log(created_at, list(events))
                while len(self._logs) > self.max_runs:
                    self._logs.popitem(last=False)


LOGS = LogCache()
# The indexes runs' last turns left folded (engine.folded), shared by this process's runners:
# a resume after an answer reads the answer alone, whichever runner recorded it.
FOLDED = FoldedLogs()
