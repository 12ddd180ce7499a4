"""Hot appends to SQLite from the event loop's own thread, never waiting for a lock.

A node's events (started, completed, output, route, state: no question, answer or status
change) are two statements and a commit that SQLite in WAL mode finishes in tens of
microseconds, while a hand-off to a worker thread and back costs several times that, on
every node's critical path: a node's events must commit before its successors start. So the
runtime's stores write such a batch right where the engine runs, on a connection of their
own per thread. That connection never waits: when another writer holds SQLite's write lock
(an answer being recorded, a second process) or anything else goes wrong, it rolls back and
the batch takes the store's usual path through its thread, which waits its turn and reports
errors the Django way. It never checkpoints either (the one step that syncs to disk with
``synchronous=NORMAL``): the store runs checkpoints in its thread every ``CHECKPOINT_EVERY``
inline commits. The commit itself is the same SQLite commit, as durable as the thread path's.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from django.conf import settings

from engine import Event
from wfapp.store.sql import AppendSQL, touch_times

CHECKPOINT_EVERY = 1000  # inline commits between WAL checkpoints (about as often as SQLite's own)


def _quote(name: str) -> str:
    return name if name.startswith('"') else f'"{name}"'


class InlineSQLite:
    """Appends hot batches to one SQLite file, from whichever thread calls (one connection each)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.sql = AppendSQL("sqlite", _quote, param="?")
        self.commits = 0
        self._local = threading.local()
        self._opened: list[sqlite3.Connection] = []
        self._lock = threading.Lock()

    def _connection(self) -> sqlite3.Connection | None:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None and not getattr(self._local, "unusable", False):
            conn = sqlite3.connect(self.path, isolation_level=None, timeout=0, check_same_thread=False)
            try:
                mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
            except sqlite3.OperationalError:  # locked by another connection right now: next time
                conn.close()
                return None
            if mode != "wal":
                conn.close()  # outside WAL a commit syncs to disk: not on the event loop
                self._local.unusable = True
                return None
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute("PRAGMA wal_autocheckpoint=0")
            self._local.conn = conn
            with self._lock:
                self._opened.append(conn)
        return conn

    def append(
        self, session_id: str, events: Sequence[Event], expected_seq: int, lease: tuple[str, int] | None
    ) -> bool:
        """Commit the batch and return True, or change nothing and return False."""
        conn = self._connection()
        if conn is None:
            return False
        touch = [str(t.replace(tzinfo=None)) for t in touch_times(datetime.now(UTC), False)]
        params = [expected_seq + len(events), *touch, session_id, expected_seq, *(lease or ())]
        try:
            conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error:
            return False  # another writer holds the lock
        try:
            if conn.execute(self.sql.update_session((), lease is not None), params).rowcount != 1:
                conn.execute("ROLLBACK")
                return False  # refused: the store's path says why
            for statement, rows in self.sql.inserts(session_id, events):
                conn.execute(statement, rows)
            conn.execute("COMMIT")
        except sqlite3.Error:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return False
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        self.commits += 1
        return True

    def close_all(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()
        self._local = threading.local()


_BY_PATH: dict[str, InlineSQLite] = {}


def for_default_database() -> InlineSQLite | None:
    """The inline appender for the default database, or None unless it is an SQLite file."""
    db: dict[str, Any] = settings.DATABASES["default"]
    name = str(db["NAME"])
    if db["ENGINE"] != "django.db.backends.sqlite3" or name == ":memory:" or "mode=memory" in name:
        return None
    found = _BY_PATH.get(name)
    if found is None:
        found = _BY_PATH[name] = InlineSQLite(name)
    return found


def close_all() -> None:
    """Close every inline connection (at shutdown, or before a test database is dropped)."""
    for inline in _BY_PATH.values():
        inline.close_all()
