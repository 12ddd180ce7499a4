"""``asyncio.gather`` over children that interrupt at different times collects every interrupt."""

from __future__ import annotations

import asyncio
import random
from collections import Counter
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import pytest

from engine import Context, InMemoryEventStore, RequestInput, Runner, Workflow, node

# (delay in seconds, whether the child interrupts); child 4 completes long after child 1 asks.
PLAN = [(0.03, True), (0.0, True), (0.02, False), (0.01, True), (0.04, False), (0.005, False)]


def gathering_workflow(calls: Counter[str], plan: Sequence[tuple[float, bool]]) -> Workflow:
    @node
    async def child(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"child{node_input}"] += 1
        delay, asks = plan[node_input]
        await asyncio.sleep(delay)
        if asks:
            yield RequestInput(message=f"child {node_input}", interrupt_id=f"c{node_input}")
        else:
            yield f"done {node_input}"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        calls["orch"] += 1
        return list(await asyncio.gather(*(ctx.run_node(child, i) for i in range(len(plan)))))

    return Workflow(name="wf", edges=[("START", orch)])


def shuffled_plans() -> list[list[tuple[float, bool]]]:
    plans = [PLAN]
    for seed in range(3):
        rng = random.Random(seed)
        plans.append([(rng.choice([0.0, 0.003, 0.01, 0.02]), rng.random() < 0.5) for _ in range(8)])
    return plans


@pytest.mark.parametrize("plan", shuffled_plans())
async def test_gather_collects_every_interrupt_and_runs_every_child_once(
    calls: Counter[str], read_log: Any, any_store: InMemoryEventStore, plan: list[tuple[float, bool]]
) -> None:
    runner = Runner(gathering_workflow(calls, plan), store=any_store)
    first = await runner.run()
    asking = [i for i, (_, asks) in enumerate(plan) if asks]
    finishing = [i for i, (_, asks) in enumerate(plan) if not asks]

    assert asking and finishing  # every plan mixes both
    assert first.status == "waiting", first.error
    assert sorted(i.id for i in first.interrupts) == sorted(f"c{i}" for i in asking)
    assert calls == {"orch": 1, **{f"child{i}": 1 for i in range(len(plan))}}
    log = await read_log(runner, first.session_id)
    assert log.errors() == []
    outputs = log.outputs()
    for i in finishing:
        assert outputs[f"wf@1/orch@1/child@{i + 1}"] == f"done {i}"

    result = await runner.resume(first.session_id, {f"c{i}": f"answer {i}" for i in asking})

    assert result.status == "completed", result.error
    assert result.output == [f"answer {i}" if asks else f"done {i}" for i, (_, asks) in enumerate(plan)]
    assert calls == {"orch": 2, **{f"child{i}": 1 for i in range(len(plan))}}


async def test_gather_answered_one_at_a_time_runs_no_finished_child_again(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    runner = Runner(gathering_workflow(calls, PLAN), store=any_store)
    first = await runner.run()

    for number, interrupt_id in enumerate(["c3", "c0", "c1"], start=2):
        last = await runner.resume(first.session_id, {interrupt_id: interrupt_id})
        assert calls["orch"] == number
        assert all(calls[f"child{i}"] == 1 for i in range(len(PLAN)))

    assert last.output == ["c0", "c1", "done 2", "c3", "done 4", "done 5"]


async def test_nested_gathers_collect_interrupts_from_every_level(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    @node
    async def leaf(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"leaf{node_input}"] += 1
        await asyncio.sleep((node_input % 3) * 0.004)
        if node_input % 2:
            yield RequestInput(interrupt_id=f"l{node_input}")
        else:
            yield node_input

    @node(rerun_on_resume=True)
    async def group(ctx: Context, node_input: list[int]) -> list[Any]:
        calls["group"] += 1
        return list(await asyncio.gather(*(ctx.run_node(leaf, i) for i in node_input)))

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        return list(
            await asyncio.gather(*(ctx.run_node(group, [3 * g, 3 * g + 1, 3 * g + 2]) for g in range(3)))
        )

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=any_store)
    first = await runner.run()

    odd = [i for i in range(9) if i % 2]
    assert sorted(i.id for i in first.interrupts) == sorted(f"l{i}" for i in odd)
    assert all(calls[f"leaf{i}"] == 1 for i in range(9))

    result = await runner.resume(first.session_id, {f"l{i}": -i for i in odd})
    assert result.output == [[0, -1, 2], [-3, 4, -5], [6, -7, 8]]
    assert all(calls[f"leaf{i}"] == 1 for i in range(9))


async def test_task_group_of_interrupting_children_waits_and_completes_over_successive_resumes(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    """docs/engine.md: a TaskGroup cancels siblings when one child asks, so questions may come one resume at a time."""

    @node
    async def ask(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"ask{node_input}"] += 1
        yield RequestInput(interrupt_id=f"q{node_input}")

    @node
    async def slow(node_input: Any) -> str:
        await asyncio.sleep(0.01)
        return "slow done"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        async with asyncio.TaskGroup() as group:
            tasks = [
                group.create_task(ctx.run_node(ask, 1)),
                group.create_task(ctx.run_node(slow)),
                group.create_task(ctx.run_node(ask, 2)),
            ]
        return [task.result() for task in tasks]

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=any_store)
    result = await runner.run()  # node errors and interrupts never raise out of run()
    assert result.status == "waiting", result.error
    assert "q1" in [i.id for i in result.interrupts]

    for _ in range(3):
        if result.status != "waiting":
            break
        result = await runner.resume(result.session_id, {i.id: i.id.upper() for i in result.interrupts})

    assert result.status == "completed", result.error
    assert result.output == ["Q1", "slow done", "Q2"]
    assert calls["ask1"] == 1  # the first to ask is never cancelled
    assert calls["ask2"] in (1, 2)  # once, or twice if the group cancelled it before it asked
