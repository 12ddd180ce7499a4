"""``NodeGate``: lets a host stop its runners' turns at node boundaries (a worker that drains).

Every node execution of a runner given a gate passes it before its ``started`` event. Once the
host closes the gate, executions already past it go on and record their outcome; new ones wait
at the gate and write nothing. ``wait_idle`` returns when no execution is doing work of its own
(each one in flight is either waiting at the gate or waiting for a child in flight), so the
host can then cancel its turns without cutting any node short: the runs stay ``running`` and
resume elsewhere from their last completed node.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

_POLL_SECONDS = 0.02

_Key = tuple[str, str]  # (session id, node path)


class NodeGate:
    """Open until ``close``; shared by any number of runners and turns in one event loop."""

    def __init__(self) -> None:
        self.closed = False
        self._running: set[_Key] = set()
        self._held: set[_Key] = set()

    def close(self) -> None:
        """Start no new node execution from now on (they wait at the gate)."""
        self.closed = True

    @asynccontextmanager
    async def passage(self, session_id: str, path: str) -> AsyncIterator[None]:
        """Hold a node execution here while the gate is closed; track it while it runs."""
        key = (session_id, path)
        if self.closed:
            self._held.add(key)
            try:
                await asyncio.get_running_loop().create_future()  # until the host cancels the turn
            finally:
                self._held.discard(key)
        self._running.add(key)
        try:
            yield
        finally:
            self._running.discard(key)

    def busy(self) -> bool:
        """Whether some execution in flight is doing work of its own (has no child in flight)."""
        inside = self._running | self._held
        return any(
            not any(other[0] == session_id and other[1].startswith(f"{path}/") for other in inside)
            for session_id, path in self._running
        )

    async def wait_idle(self) -> None:
        """Return once no execution is doing work of its own (see the module's docstring)."""
        while self.busy():
            await asyncio.sleep(_POLL_SECONDS)
