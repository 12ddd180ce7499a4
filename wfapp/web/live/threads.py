"""Database reads of live pages, in the thread pool, on connections those threads keep (SQLite).

A doorbell makes every open page read: hundreds of reads a second under load, each in one of the
event loop's pool threads. Channels' ``database_sync_to_async`` closes the thread's connections
after every call (as a request's end would), so on SQLite each read paid for a new connection
(open, pragmas, Django's SQL functions registered) and its close: a third of the server's time
with 25 pages open. Here a pool thread keeps its SQLite connection from one read to the next
(SQLite needs no server-side session; in autocommit each read sees the latest commit) and drops
it only when it broke; PostgreSQL's connection still goes back to the pool after every read
(``CONN_MAX_AGE`` 0), so a few threads never hold the pool's connections between reads.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import SyncToAsync
from django.db import connections


def _tidy() -> None:
    """Close what must not be reused: every connection but a healthy SQLite one (as Django's
    ``close_if_unusable_or_obsolete`` judges it, without the age that closes the rest)."""
    for connection in connections.all(initialized_only=True):
        if connection.vendor != "sqlite":
            connection.close_if_unusable_or_obsolete()
        elif connection.connection is not None:
            if connection.autocommit != connection.settings_dict["AUTOCOMMIT"]:
                connection.close()
            elif connection.errors_occurred:
                if connection.is_usable():
                    connection.errors_occurred = False
                else:
                    connection.close()


class _Read(SyncToAsync[Any, Any]):
    def thread_handler(self, loop: Any, *args: Any, **kwargs: Any) -> Any:
        _tidy()
        try:
            return super().thread_handler(loop, *args, **kwargs)  # type: ignore[no-untyped-call]
        finally:
            _tidy()


def reads[T](fn: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """``fn`` (synchronous, reading the database) for a consumer to await, in the thread pool: not
    on the one thread Django's synchronous code shares with the HTTP views, so open pages catching
    up never queue behind each other and the answers being posted."""
    return _Read(fn, thread_sensitive=False)
