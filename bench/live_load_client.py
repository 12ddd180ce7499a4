"""The live-load benchmark's open pages: an inbox or a run page, as a browser holds it.

A ``Page`` loads its page over HTTP (its position from ``#live-hello``, like live.js), opens
its websocket, says hello, and notes for every frame only what the benchmark reads later (the
arrival time, the answered cards it closes, the events it carries, whether it re-renders the
whole list): 200 sockets for a minute would otherwise hold hundreds of megabytes of HTML.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from bench.dashboard_client import Browser

ANSWERED = re.compile(r'inbox-item answered" id="interrupt-(\d+)"')
SEQ = re.compile(r'data-seq="(\d+)"')
HELLO = re.compile(r"data-hello='([^']*)'")
CARD = re.compile(r'id="interrupt-(\d+)"')


def cookies(browser: Browser) -> str:
    return "; ".join(f"{c.name}={c.value}" for c in browser.jar)


@dataclass
class Frame:
    at: float
    answered: tuple[int, ...] = ()
    seqs: tuple[int, ...] = ()
    whole_list: bool = False  # the inbox list again (a socket caught up after falling behind)


@dataclass
class Page:
    """One open page: ``kind`` "inbox" or "run" (then ``run`` is its run's id)."""

    kind: str
    browser: Browser
    run: str = ""
    opened_at: float = 0.0
    first_frame_at: float | None = None
    frames: list[Frame] = field(default_factory=list)
    close_code: int | None = None  # set when the server closed the socket
    error: str = ""
    _ws: Any = None
    _reader: asyncio.Task[None] | None = None

    @property
    def path(self) -> str:
        return "/" if self.kind == "inbox" else f"/runs/{self.run}/"

    async def open(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.typing import Origin

        self.opened_at = time.time()
        _, text = await asyncio.to_thread(self.browser.get, self.path)
        found = HELLO.search(text)
        hello: dict[str, Any] = json.loads(html.unescape(found.group(1))) if found else {}
        if self.kind == "inbox":
            query = f"?watermark={hello.get('watermark', 0)}"
        else:
            query = f"?after={hello.get('last_seq', 0)}"
            hello["open"] = [int(pk) for pk in CARD.findall(text)][:200]
        hello.update(type="hello", reconnect=False)
        base = self.browser.base
        ws_path = "/ws/inbox/" if self.kind == "inbox" else f"/ws/runs/{self.run}/"
        self._ws = await connect(
            base.replace("http://", "ws://") + ws_path + query,
            additional_headers={"Cookie": cookies(self.browser)},
            origin=Origin(base),
            max_size=2**24,
            open_timeout=60,
        )
        self._reader = asyncio.create_task(self._read())
        await self._ws.send(json.dumps(hello))

    async def _read(self) -> None:
        try:
            async for message in self._ws:
                at = time.time()
                text = message if isinstance(message, str) else message.decode()
                if self.first_frame_at is None:
                    self.first_frame_at = at
                self.frames.append(
                    Frame(
                        at,
                        tuple(int(pk) for pk in ANSWERED.findall(text)),
                        tuple(int(s) for s in SEQ.findall(text)),
                        'id="inbox-list"' in text,
                    )
                )
        except Exception as exc:  # an abnormal close: noted, the page counts as dropped
            self.error = f"{type(exc).__name__}: {exc}"
        self.close_code = self._ws.close_code if self._ws.close_code is not None else -1

    async def close(self) -> None:
        if self._ws is None:
            return
        if self._reader is not None and not self._reader.done():
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader
        with contextlib.suppress(Exception):
            await self._ws.close()

    def answered_at(self, pk: int, after: float) -> tuple[float | None, bool]:
        """When this inbox page learnt that question ``pk`` was answered (at or after ``after``):
        its closed card, or a whole list rendered after the answer; and whether it was the list."""
        for frame in self.frames:
            if frame.at < after:
                continue
            if pk in frame.answered:
                return frame.at, False
            if frame.whole_list:
                return frame.at, True
        return None, False

    def seq_at(self, seq: int) -> float | None:
        """When this run page first got the event ``seq``."""
        return next((f.at for f in self.frames if seq in f.seqs), None)

    def frames_between(self, start: float, end: float) -> int:
        return sum(1 for f in self.frames if start <= f.at <= end)


def server_cpu_s(pid: int) -> float:
    """The server process's CPU seconds so far (user + system, all its threads), from /proc."""
    import os

    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return ticks / os.sysconf("SC_CLK_TCK")
