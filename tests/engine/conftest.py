"""Shared fixtures for the engine tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest

from engine import Event, EventStore, InMemoryEventStore


@dataclass(frozen=True)
class Log:
    """A session's stored events with the look-ups dynamic-workflow tests need."""

    events: list[Event]

    def of(self, kind: str) -> list[Event]:
        return [event for event in self.events if event.kind == kind]

    def started(self) -> list[str]:
        """Node paths in the order their executions started."""
        return [event.node_path for event in self.of("started")]

    def starts(self, path: str) -> int:
        """How many executions of ``path`` the log records."""
        return sum(1 for event in self.of("started") if event.node_path == path)

    def outputs(self) -> dict[str, Any]:
        """Node path -> the last output recorded at that path."""
        return {
            event.node_path: event.output
            for event in self.events
            if event.output is not None and event.kind in ("output", "completed")
        }

    def output_event(self, path: str) -> Event:
        (event,) = [
            e for e in self.events
            if e.node_path == path and e.output is not None and e.kind in ("output", "completed")
        ]
        return event

    def after(self, seq: int) -> Log:
        """The events appended after ``seq`` (what one turn wrote)."""
        return Log([event for event in self.events if event.seq > seq])

    @property
    def last_seq(self) -> int:
        return self.events[-1].seq if self.events else 0


@pytest.fixture
def counts() -> Counter[str]:
    """Execution counters: nodes do ``counts[name] += 1`` each time their body runs."""
    return Counter()


@pytest.fixture
def store() -> InMemoryEventStore:
    return InMemoryEventStore()


@pytest.fixture
def read_log() -> Callable[[EventStore, str], Awaitable[Log]]:
    """``await read_log(store, session_id)`` returns the session's ``Log``."""

    async def read(store: EventStore, session_id: str) -> Log:
        return Log(list(await store.list_events(session_id)))

    return read
