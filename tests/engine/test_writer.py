"""The log writer: the same log whether the store's append waits or not."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engine import START, Context, Event, InMemoryEventStore, Runner, Workflow, node


class WaitingStore(InMemoryEventStore):
    """Appends through a coroutine that yields to the loop first, as a database store does."""

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        await asyncio.sleep(0)
        return self._append(session_id, events, expected_seq)


class SlowStore(InMemoryEventStore):
    """Appends take a while (a round trip to a database and a channel layer)."""

    def __init__(self) -> None:
        super().__init__()
        self.appending = asyncio.Event()

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        self.appending.set()
        await asyncio.sleep(0.05)
        self.appending.clear()
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
    # The workflow's start, one event per plain function node (nobody watches), its own end.
    assert kinds == ["started", "completed", "completed", "completed", "completed", "status"]


async def test_a_node_started_while_an_append_is_in_flight_is_in_the_log_before_it_ends() -> None:
    # Live pages read what runs from the log: a child's "started" queued behind its parent's
    # append must not wait for the child's end (a streaming model step showed nothing until then).
    store = SlowStore()

    async def child(node_input: str) -> str:
        async with asyncio.timeout(5):
            while not any(e.kind == "started" and e.node_path.endswith("/child@1") for e in logged()):
                await asyncio.sleep(0.01)
        return node_input

    @node(rerun_on_resume=True)
    async def parent(ctx: Context, node_input: str) -> str:
        await store.appending.wait()  # the parent's "started" is on its way
        return str(await ctx.run_node(child, node_input))

    def logged() -> list[Event]:
        return [event for log in store._logs.values() for event in log.events]

    result = await Runner(Workflow(name="wf", edges=[(START, parent)]), store).run("x")
    assert (result.status, result.output) == ("completed", "x"), result.error
