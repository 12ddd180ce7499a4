"""The log writer: the same log whether the store's append waits or not."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engine import START, Event, InMemoryEventStore, Runner, Workflow


class WaitingStore(InMemoryEventStore):
    """Appends through a coroutine that yields to the loop first, as a database store does."""

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        await asyncio.sleep(0)
        return self._append(session_id, events, expected_seq)


def inc(node_input: int) -> int:
    return node_input + 1


def double(node_input: int) -> int:
    return node_input * 2


def route(node_input: int) -> Event:
    return Event(output=node_input, route="on", state={"seen": node_input})


def shape(store: InMemoryEventStore, session_id: str) -> list[tuple[Any, ...]]:
    return [
        (e.seq, e.kind, e.node_path, e.output, e.route, e.state, e.status)
        for e in store._logs[session_id].events
    ]


async def test_a_waiting_append_writes_each_event_once_as_the_in_memory_one_does() -> None:
    def build() -> Workflow:
        return Workflow(name="wf", edges=[(START, inc, route, {"on": double})])

    fast, slow = InMemoryEventStore(), WaitingStore()
    assert WaitingStore.append_nowait is None  # the writer takes its usual path
    done = [await Runner(build(), store).run(1, session_id="s") for store in (fast, slow)]
    assert [(r.status, r.output) for r in done] == [("completed", 4)] * 2
    assert shape(slow, "s") == shape(fast, "s")
    kinds = [kind for _, kind, *_ in shape(slow, "s")]
    assert kinds.count("started") == 4  # the workflow and its three node executions, once each
    assert kinds.count("completed") == 4
