"""``@node(parallel_worker=True)``: one execution per item, bounded, in order, partially resumable."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from engine import Context, InMemoryEventStore, RequestInput, Runner, Workflow, node
from engine.errors import ConfigurationError


def peak_tracking_worker(calls: Counter[str], limit: int | None) -> Any:
    active = 0

    async def pw(node_input: int) -> int:
        nonlocal active
        calls[f"item{node_input}"] += 1
        active += 1
        calls["peak"] = max(calls["peak"], active)
        await asyncio.sleep(0.005)
        active -= 1
        return node_input

    if limit is None:
        return node(pw, parallel_worker=True)
    return node(pw, parallel_worker=True, max_parallel_workers=limit)


async def test_parallel_worker_runs_once_per_item_and_keeps_input_order(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node(parallel_worker=True)
    async def pw(node_input: int) -> str:
        calls[f"item{node_input}"] += 1
        await asyncio.sleep((5 - node_input) * 0.002)  # the last item finishes first
        return f"<{node_input}>"

    @node
    def summary(node_input: list[str]) -> str:
        return "".join(node_input)

    runner = Runner(Workflow(name="wf", edges=[("START", pw, summary)]), store=store)
    result = await runner.run([1, 2, 3, 4, 5])

    assert result.output == "<1><2><3><4><5>"
    assert calls == {f"item{i}": 1 for i in range(1, 6)}
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/pw@1"] == ["<1>", "<2>", "<3>", "<4>", "<5>"]
    for k in range(1, 6):
        assert log.outputs()[f"wf@1/pw@1/pw@{k}"] == f"<{k}>"


async def test_parallel_worker_runs_at_most_max_parallel_workers_items_at_once(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    pw = peak_tracking_worker(calls, limit=3)
    runner = Runner(Workflow(name="wf", edges=[("START", pw)]), store=store)
    result = await runner.run(list(range(10)))

    assert result.output == list(range(10))
    assert calls["peak"] == 3
    assert all(calls[f"item{i}"] == 1 for i in range(10))


async def test_parallel_worker_bound_defaults_to_eight(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    pw = peak_tracking_worker(calls, limit=None)
    runner = Runner(Workflow(name="wf", edges=[("START", pw)]), store=store)
    result = await runner.run(list(range(20)))

    assert result.output == list(range(20))
    assert calls["peak"] == 8


async def test_parallel_worker_run_by_run_node_nests_its_items_under_the_caller(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node(parallel_worker=True, max_parallel_workers=2)
    def double(node_input: int) -> int:
        return node_input * 2

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: list[int]) -> list[int]:
        return await ctx.run_node(double, node_input)

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=store)
    result = await runner.run([1, 2, 3])

    assert result.output == [2, 4, 6]
    started = (await read_log(runner, result.session_id)).started()
    assert [p for p in started if p.startswith("wf@1/orch@1/")] == [
        "wf@1/orch@1/double@1",
        "wf@1/orch@1/double@1/double@1",
        "wf@1/orch@1/double@1/double@2",
        "wf@1/orch@1/double@1/double@3",
    ]


async def test_parallel_worker_resume_re_runs_only_the_interrupted_items(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node(parallel_worker=True, rerun_on_resume=True)
    async def review(ctx: Context, node_input: str) -> AsyncGenerator[Any, None]:
        calls[node_input] += 1
        if not node_input.startswith("?"):
            yield node_input.upper()
        elif node_input in ctx.resume_inputs:
            yield ctx.resume_inputs[node_input]
        else:
            yield RequestInput(message=f"check {node_input}", interrupt_id=node_input)

    items = ["a", "?b", "c", "?d", "?e"]
    runner = Runner(Workflow(name="wf", edges=[("START", review)]), store=store)
    first = await runner.run(items)
    assert sorted(i.id for i in first.interrupts) == ["?b", "?d", "?e"]
    assert calls == dict.fromkeys(items, 1)

    second = await runner.resume(first.session_id, {"?d": "D!"})
    assert sorted(i.id for i in second.interrupts) == ["?b", "?e"]
    assert calls == {**dict.fromkeys(items, 1), "?d": 2}

    await runner.resume(first.session_id, {"?e": "E!"})
    result = await runner.resume(first.session_id, {"?b": "B!"})
    assert result.output == ["A", "B!", "C", "D!", "E!"]
    assert calls == {"a": 1, "c": 1, "?b": 2, "?d": 2, "?e": 2}


async def test_parallel_worker_resume_after_failure_re_runs_only_the_failed_item(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node(parallel_worker=True)
    def charge(node_input: int) -> int:
        calls[f"item{node_input}"] += 1
        if node_input == 3 and calls["item3"] == 1:
            raise ConnectionError("payment gateway down")
        return node_input * 100

    runner = Runner(Workflow(name="wf", edges=[("START", charge)]), store=store)
    failed = await runner.run([1, 2, 3, 4])
    assert failed.status == "failed"
    assert "payment gateway down" in (failed.error or "")
    assert calls == {"item1": 1, "item2": 1, "item3": 1, "item4": 1}
    errors = (await read_log(runner, failed.session_id)).errors()
    assert [e.node_path for e in errors] == ["wf@1/charge@1/charge@3"]

    result = await runner.resume(failed.session_id, {})
    assert result.output == [100, 200, 300, 400]
    assert calls == {"item1": 1, "item2": 1, "item3": 2, "item4": 1}


async def test_parallel_worker_with_failed_and_interrupted_items_resumes_each_separately(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node(parallel_worker=True)
    async def step(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"item{node_input}"] += 1
        if node_input == 2 and calls["item2"] == 1:
            raise ConnectionError("flaky")
        if node_input == 3:
            yield RequestInput(interrupt_id="three")
        else:
            yield node_input

    runner = Runner(Workflow(name="wf", edges=[("START", step)]), store=store)
    failed = await runner.run([1, 2, 3])
    assert failed.status == "failed"
    assert calls == {"item1": 1, "item2": 1, "item3": 1}

    waiting = await runner.resume(failed.session_id, {})
    assert waiting.status == "waiting"
    assert [i.id for i in waiting.interrupts] == ["three"]
    assert calls == {"item1": 1, "item2": 2, "item3": 1}

    result = await runner.resume(failed.session_id, {"three": 3})
    assert result.output == [1, 2, 3]
    assert calls == {"item1": 1, "item2": 2, "item3": 1}


async def test_parallel_worker_runs_a_non_list_input_as_a_list_of_one(
    store: InMemoryEventStore, read_log: Any
) -> None:
    """Issue 25 item 4: as in ADK, one item that is not a list is run as a list of one."""

    @node(parallel_worker=True)
    def each(node_input: Any) -> Any:
        return f"<{node_input}>"

    runner = Runner(Workflow(name="wf", edges=[("START", each)]), store=store)
    result = await runner.run("not a list")

    assert result.status == "completed", result.error
    assert result.output == ["<not a list>"]
    assert (await read_log(runner, result.session_id)).started_count("each@1/each@1") == 1


def test_max_parallel_workers_without_parallel_worker_is_a_configuration_error() -> None:
    with pytest.raises(ConfigurationError):
        node(lambda node_input: node_input, name="solo", max_parallel_workers=2)


async def test_parallel_worker_over_an_empty_list_outputs_an_empty_list(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node(parallel_worker=True)
    def each(node_input: Any) -> Any:
        calls["each"] += 1
        return node_input

    @node
    def after(node_input: list[Any]) -> str:
        return f"{len(node_input)} results"

    result = await Runner(Workflow(name="wf", edges=[("START", each, after)]), store=store).run([])

    assert result.output == "0 results"
    assert calls["each"] == 0


async def test_bounded_parallel_worker_collects_every_items_interrupt(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    @node(parallel_worker=True, max_parallel_workers=2)
    async def ask(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"item{node_input}"] += 1
        await asyncio.sleep(0.001 * (node_input % 3))
        yield RequestInput(interrupt_id=f"i{node_input}")

    runner = Runner(Workflow(name="wf", edges=[("START", ask)]), store=any_store)
    first = await runner.run(list(range(6)))

    assert sorted(i.id for i in first.interrupts) == [f"i{n}" for n in range(6)]
    result = await runner.resume(first.session_id, {f"i{n}": n * n for n in range(6)})
    assert result.output == [n * n for n in range(6)]
    assert calls == {f"item{n}": 1 for n in range(6)}


async def test_parallel_worker_items_may_orchestrate_children_and_resume_separately(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    async def check(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"check{node_input}"] += 1
        if node_input == 2:
            yield RequestInput(interrupt_id="two")
        else:
            yield node_input * 10

    @node(parallel_worker=True, rerun_on_resume=True)
    async def item(ctx: Context, node_input: int) -> int:
        calls[f"item{node_input}"] += 1
        return await ctx.run_node(check, node_input) + 1

    runner = Runner(Workflow(name="wf", edges=[("START", item)]), store=store)
    first = await runner.run([1, 2, 3])
    assert [i.node_path for i in first.interrupts] == ["wf@1/item@1/item@2/check@1"]

    result = await runner.resume(first.session_id, {"two": 20})

    assert result.output == [11, 21, 31]
    assert calls == {"item1": 1, "item2": 2, "item3": 1, "check1": 1, "check2": 1, "check3": 1}
