"""Shared fixtures for the engine tests: a store, and a reader that folds a session's log."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest

from engine import Event, InMemoryEventStore, Runner


def _begins(event: Event) -> bool:
    return event.kind == "started" or (event.kind == "completed" and event.seen_seq is not None)


@dataclass
class Log:
    """A session's stored events, with the questions tests ask of them."""

    events: list[Event]

    def of_kind(self, *kinds: str) -> list[Event]:
        return [event for event in self.events if event.kind in kinds]

    def kinds(self) -> list[str]:
        return [event.kind for event in self.events]

    def started(self) -> list[str]:
        """The node paths that began an execution, in log order (the root included): a
        ``started`` event, or a ``completed`` one with ``seen_seq`` (a plain function's
        execution that nobody watched live is that one event)."""
        return [event.node_path for event in self.events if _begins(event)]

    def ran(self) -> list[str]:
        """The paths that ran, in log order: every execution that began, and every step recorded
        by one ``completed`` event alone (``Context.step``)."""
        began = set(self.started())
        return [
            e.node_path
            for e in self.events
            if _begins(e) or (e.kind == "completed" and e.node_path not in began)
        ]

    def began(self) -> dict[str, int]:
        """Node path -> the seq of the event its latest execution began with."""
        return {event.node_path: event.seq for event in self.events if _begins(event)}

    def started_count(self, path_suffix: str) -> int:
        """How many executions began at a path ending with ``path_suffix``."""
        return sum(1 for path in self.started() if path.endswith(path_suffix))

    def outputs(self) -> dict[str, Any]:
        """Node path -> output, for every event that carries an output (status events aside)."""
        return {
            event.node_path: event.output
            for event in self.events
            if event.output is not None and event.kind != "status"
        }

    def output_events(self) -> list[Event]:
        return [e for e in self.events if e.output is not None and e.kind != "status"]

    def errors(self) -> list[Event]:
        return self.of_kind("error")

    def status(self) -> list[str | None]:
        return [event.status for event in self.of_kind("status")]

    def routes(self) -> dict[str, Any]:
        return {event.node_path: event.route for event in self.events if event.route is not None}

    def state(self) -> dict[str, Any]:
        """The session state folded from every state delta in the log."""
        folded: dict[str, Any] = {}
        for event in self.events:
            if event.state:
                folded.update(event.state)
        return folded


@pytest.fixture
def store() -> InMemoryEventStore:
    return InMemoryEventStore()


@pytest.fixture
def read_log() -> Callable[[Runner, str], Awaitable[Log]]:
    """``await read_log(runner, session_id)`` returns the session's ``Log``."""

    async def read(runner: Runner, session_id: str) -> Log:
        return Log(list(await runner.store.list_events(session_id)))

    return read


@pytest.fixture
def calls() -> Counter[str]:
    """Execution counters: a node does ``calls[name] += 1`` each time its code runs."""
    return Counter()


@pytest.fixture
def turns() -> Callable[[Log], list[Log]]:
    """``turns(log)`` splits a log into the turns that wrote it (each ends with a status event)."""

    def split(log: Log) -> list[Log]:
        parts: list[Log] = [Log([])]
        for event in log.events:
            parts[-1].events.append(event)
            if event.kind == "status":
                parts.append(Log([]))
        return [part for part in parts if part.events]

    return split


class SlowEventStore(InMemoryEventStore):
    """An in-memory store whose appends take a while, as a database's do."""

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        await asyncio.sleep(0.002)
        return await super().append(session_id, events, expected_seq=expected_seq)


@pytest.fixture
def slow_store() -> InMemoryEventStore:
    return SlowEventStore()


@pytest.fixture(params=["in-memory", "slow-appends"])
def any_store(request: pytest.FixtureRequest) -> InMemoryEventStore:
    """Runs the test twice: on the in-memory store and on one whose appends take a while."""
    return InMemoryEventStore() if request.param == "in-memory" else SlowEventStore()
