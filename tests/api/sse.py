"""Reading Server-Sent Events from a streaming response in tests."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any


@dataclass
class Frame:
    event: str
    data: Any
    id: int | str | None  # a run's seq; the inbox's position (a token on PostgreSQL)


class Reader:
    """Frames of one SSE response, one at a time (comments and ``retry:`` skipped)."""

    def __init__(self, response: Any) -> None:
        assert response.status_code == 200, response.content
        assert response["Content-Type"].startswith("text/event-stream")
        self.chunks: AsyncIterator[bytes] = aiter(response.streaming_content)
        self.buffer = ""

    async def next(self, timeout: float = 15.0) -> Frame:
        async with asyncio.timeout(timeout):
            while True:
                while "\n\n" in self.buffer:
                    block, self.buffer = self.buffer.split("\n\n", 1)
                    frame = _parse(block)
                    if frame is not None:
                        return frame
                chunk = await anext(self.chunks)
                self.buffer += chunk.decode() if isinstance(chunk, bytes) else chunk

    async def until(self, event: str, timeout: float = 15.0) -> list[Frame]:
        """Every frame up to and including the first ``event`` frame."""
        seen = []
        while True:
            frame = await self.next(timeout)
            seen.append(frame)
            if frame.event == event:
                return seen

    async def close(self) -> None:
        closing = getattr(self.chunks, "aclose", None)
        if closing is not None:
            await closing()


def _parse(block: str) -> Frame | None:
    fields: dict[str, str] = {}
    for line in block.splitlines():
        if not line or line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        fields[name] = value.removeprefix(" ")
    if "data" not in fields:
        return None
    seq = fields.get("id")
    position = int(seq) if seq and seq.isdigit() else seq or None
    return Frame(fields.get("event", "message"), json.loads(fields["data"]), position)
