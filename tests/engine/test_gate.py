"""A host's drain (``NodeGate``): turns stop at node boundaries, nothing is cut short."""

from __future__ import annotations

import asyncio
from collections import Counter

from engine import START, Context, InMemoryEventStore, NodeGate, Runner, Workflow, node

from .builders import single


async def _until(condition: object) -> None:
    async with asyncio.timeout(10):
        while not condition():  # type: ignore[operator]
            await asyncio.sleep(0.005)


async def _cut(gate: NodeGate, turn: asyncio.Task[object]) -> None:
    """What a draining host does: close, wait for the nodes in flight, cancel the turn."""
    gate.close()
    async with asyncio.timeout(10):
        await gate.wait_idle()
    turn.cancel()
    await asyncio.gather(turn, return_exceptions=True)


async def test_a_closed_gate_lets_the_node_in_flight_finish_and_starts_no_other(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    release = asyncio.Event()

    @node
    async def first(node_input: int) -> int:
        calls["first"] += 1
        await release.wait()
        return node_input + 1

    @node
    def second(node_input: int) -> int:
        calls["second"] += 1
        return node_input * 10

    wf = Workflow(name="wf", edges=[(START, first, second)])
    gate = NodeGate()
    turn = asyncio.ensure_future(Runner(wf, store=store, gate=gate).run(1, session_id="s1"))
    await _until(lambda: calls["first"] == 1)
    gate.close()
    assert gate.busy()  # first is in flight
    asyncio.get_running_loop().call_later(0.05, release.set)
    await _cut(gate, turn)

    events = await store.list_events("s1")
    assert [(e.kind, e.node_path) for e in events if e.node_path != "wf@1"] == [
        ("started", "wf@1/first@1"),
        ("completed", "wf@1/first@1"),
    ]
    assert (await store.get_session("s1")).status == "running"

    result = await Runner(wf, store=store).advance("s1")  # another host takes it up
    assert (result.status, result.output) == ("completed", 20)
    assert calls == {"first": 1, "second": 1}


async def test_parallel_children_in_flight_finish_and_their_caller_is_cut_between_children(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    release = asyncio.Event()

    @node
    async def slow(node_input: int) -> int:
        calls["slow"] += 1
        await release.wait()
        return node_input

    @node
    def quick(node_input: int) -> int:
        calls["quick"] += 1
        return node_input

    @node
    def last(node_input: int) -> int:
        calls["last"] += 1
        return node_input * 100

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: int) -> int:
        calls["orch"] += 1
        a, b = await asyncio.gather(ctx.run_node(slow, node_input), ctx.run_node(quick, node_input))
        return await ctx.run_node(last, a + b)

    wf = single(orch)
    gate = NodeGate()
    turn = asyncio.ensure_future(Runner(wf, store=store, gate=gate).run(2, session_id="s2"))
    await _until(lambda: calls["slow"] == 1 and calls["quick"] == 1)
    gate.close()
    assert gate.busy()  # slow is in flight; orch waits for it, which is no work of its own
    asyncio.get_running_loop().call_later(0.05, release.set)
    await _cut(gate, turn)

    completed = {e.node_path for e in await store.list_events("s2") if e.kind == "completed"}
    assert completed == {"wf@1/orch@1/slow@1", "wf@1/orch@1/quick@1"}
    assert calls["last"] == 0

    result = await Runner(wf, store=store).advance("s2")
    assert result.output == 400
    assert calls == {"orch": 2, "slow": 1, "quick": 1, "last": 1}


async def test_an_open_gate_changes_nothing(calls: Counter[str], store: InMemoryEventStore) -> None:
    @node
    def step(node_input: int) -> int:
        calls["step"] += 1
        return node_input + 1

    gate = NodeGate()
    wf = Workflow(name="wf", edges=[(START, step)])
    result = await Runner(wf, store=store, gate=gate).run(1)
    assert (result.status, result.output) == ("completed", 2)
    assert not gate.busy()
