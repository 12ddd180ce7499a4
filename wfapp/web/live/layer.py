"""The in-memory channel layer of the embedded profile, lighter per message.

Channels' ``InMemoryChannelLayer`` walks every channel's queue and every group's members for
expired messages and memberships on every receive and every group send, and builds a new
``asyncio.Queue`` on every send and receive (as ``setdefault``'s default) even when the channel
has one: with a few hundred open pages each doorbell paid hundreds of walks over hundreds of
sockets and hundreds of queues thrown away, a tenth of the server's time. Expiry is measured in
seconds (a message 60 s old, a membership a day old), so walking once a second finds the same
ones, at most a second later; a queue is built only for a channel that has none.
"""

from __future__ import annotations

import asyncio
import time
from copy import deepcopy
from typing import Any

from channels.exceptions import ChannelFull
from channels.layers import InMemoryChannelLayer

CLEAN_EVERY = 1.0  # seconds between two walks for expired messages and memberships


class InMemoryLayer(InMemoryChannelLayer):  # type: ignore[misc]  # channels ships no types
    _cleaned = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned >= CLEAN_EVERY:
            self._cleaned = now
            super()._clean_expired()

    def _queue(self, channel: str) -> asyncio.Queue[Any]:
        queue = self.channels.get(channel)
        if queue is None:
            queue = self.channels[channel] = asyncio.Queue(maxsize=self.get_capacity(channel))
        return queue  # type: ignore[no-any-return]

    async def send(self, channel: str, message: dict[str, Any]) -> None:
        assert isinstance(message, dict), "message is not a dict"
        self.require_valid_channel_name(channel)
        assert "__asgi_channel__" not in message
        try:
            self._queue(channel).put_nowait((time.time() + self.expiry, deepcopy(message)))
        except asyncio.QueueFull:
            raise ChannelFull(channel) from None

    async def receive(self, channel: str) -> dict[str, Any]:
        self.require_valid_channel_name(channel)
        self._clean_expired()
        queue = self._queue(channel)
        try:
            _, message = await queue.get()
        finally:
            if queue.empty():
                self.channels.pop(channel, None)
        return message  # type: ignore[no-any-return]
