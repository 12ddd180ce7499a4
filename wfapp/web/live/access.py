"""Whether a live channel may stay open: its login session (or API token), its user, their rights.

A websocket or an SSE stream is authorized when it opens and may then stay open for hours.
``Guard`` asks again: on every delivery (``check``: who is logged in kept for ``FRESH``
seconds, their right to the page for ``RIGHT_FRESH``, each shared by the channels that ask the
same, so a busy channel costs a small read now and then, not one per message) and, on a quiet
channel, every ``WFAPP_LIVE_RECHECK_SECONDS`` (``watch``). The channel closes (websocket
close code 4401, the end of an SSE stream) once the session was logged out, flushed or expired,
the password changed (Django's session hash no longer matches), the user was deactivated, or
the user lost the right the channel was opened with (``allowed``: the answer permission, the
view of a run). While open, the channel works with the user as just read, so a permission
withdrawn is withdrawn from what it sends too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from importlib import import_module
from types import SimpleNamespace
from typing import Any

from django.conf import settings
from django.contrib import auth

from wfapp.web.live import flight
from wfapp.web.live.threads import reads
from wfapp.web.shared import peek, shared

FRESH = 1.5  # seconds a check of who is logged in answers for on the delivery path
# ... and a check of their right to the page: rights change far more rarely than sessions end, and
# checking each of a hundred open run pages' runs every 1.5 s was a tenth of a loaded server's time.
RIGHT_FRESH = 5.0

Who = Callable[[], Any]  # synchronous: the channel's user as now stored, or None when it lost access
Allowed = Callable[[Any], bool]  # synchronous: whether that user still holds the channel's right


def session_user(session_key: str | None, user_id: Any) -> Any:
    """The active user logged in by ``session_key``, if it is still ``user_id`` (else None)."""
    if not session_key:
        return None
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key)
    user = auth.get_user(SimpleNamespace(session=store))  # type: ignore[arg-type]  # it reads .session only
    return user if user.is_authenticated and user.pk == user_id else None


def for_session(user: Any, session_key: str | None) -> Who:
    """``Who`` for a channel opened by a browser's login session."""
    return lambda: session_user(session_key, user.pk)


def recheck_seconds() -> float:
    return float(settings.WFAPP_LIVE_RECHECK_SECONDS)


class Guard:
    """One live channel's right to stay open: ``check`` before each delivery, ``watch`` when quiet."""

    def __init__(
        self,
        user: Any,
        who: Who,
        allowed: Allowed,
        who_key: Hashable | None = None,
        allowed_key: Hashable | None = None,
    ) -> None:
        self.user = user
        self.who = who
        self.allowed = allowed
        # Channels with the same ``who_key`` (the same login session and user: an operator's
        # pages, whatever they show) share one read of who is logged in, and those with the same
        # ``allowed_key`` too (the same kind of page on the same thing) one check of the right, per
        # ``FRESH`` seconds: an operator's many tabs cost a check each per ``FRESH``, not one each.
        self.who_key = who_key
        self.allowed_key = allowed_key
        self.checked = time.monotonic()
        self.ok = True
        self.had: bool | None = None  # whether the user held the right when the channel opened

    async def opened(self) -> None:
        """Note which right the user held at the start (only a right held can be lost)."""
        self.had = await reads(self.allowed)(self.user)

    async def check(self) -> bool:
        """Whether the channel may deliver now (a check younger than ``FRESH`` seconds answers)."""
        if self.ok and time.monotonic() - self.checked >= FRESH:
            user = await self._shared(("guard-who", self.who_key), self.who, FRESH)
            if user is not None and self.had:
                right = ("guard-allowed", self.allowed_key, user.pk)
                if not await self._shared(right, lambda: self.allowed(user), RIGHT_FRESH):
                    user = None
            self.checked = time.monotonic()
            self.ok = user is not None
            if user is not None:
                self.user = user
        return self.ok

    async def _shared[T](self, key: tuple[Any, ...], read: Callable[[], T], ttl: float) -> T:
        """``read()`` in the thread pool; with a key (its second part), once for every channel
        with the same key checking within ``ttl`` seconds (those at the same moment await the
        first)."""
        if key[1] is None:
            return await reads(read)()
        found, value = peek(key, ttl)
        if found:
            return value  # type: ignore[no-any-return]
        return await flight.once(key, lambda: reads(shared)(key, read, ttl))

    async def watch(self, lost: Callable[[], Awaitable[None]]) -> None:
        """Check every ``WFAPP_LIVE_RECHECK_SECONDS`` until access is lost, then call ``lost``."""
        while True:
            await asyncio.sleep(recheck_seconds())
            if not await self.check():
                await lost()
                return
