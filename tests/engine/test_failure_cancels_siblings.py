"""Issue 25, item 17: a failing node cancels what still runs beside it, and the run fails at once."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from engine import InMemoryEventStore, JoinNode, Runner, Workflow, node

# Long enough that a test waiting for it would time out: the failure must not wait for it.
FOREVER = 30


def failing(calls: Counter[str]) -> Any:
    async def fail(node_input: Any) -> None:
        calls["fail"] += 1
        await asyncio.sleep(0)
        raise RuntimeError("boom")

    return node(fail)


def slow(calls: Counter[str], name: str = "slow") -> Any:
    async def run(node_input: Any) -> str:
        calls[f"{name} started"] += 1
        try:
            await asyncio.sleep(FOREVER if calls["attempt"] == 1 else 0)
        except asyncio.CancelledError:
            calls[f"{name} cancelled"] += 1
            raise
        calls[f"{name} finished"] += 1
        return name

    return node(run, name=name)


async def run_bounded(runner: Runner) -> Any:
    return await asyncio.wait_for(runner.run("x"), timeout=FOREVER / 3)


async def test_a_failing_graph_node_cancels_its_running_sibling(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    calls["attempt"] = 1
    wf = Workflow(name="wf", edges=[("START", (failing(calls), slow(calls)), JoinNode(name="join"))])
    runner = Runner(wf, store=store)

    result = await run_bounded(runner)

    assert result.status == "failed"
    assert result.error_type == "RuntimeError"
    assert calls == {"attempt": 1, "fail": 1, "slow started": 1, "slow cancelled": 1}
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/fail@1"]
    assert "wf@1/slow@1" not in log.outputs()


async def test_a_failing_parallel_worker_item_cancels_the_items_still_running(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    calls["attempt"] = 1

    async def work(node_input: int) -> str:
        if node_input == 0:
            calls["fail"] += 1
            await asyncio.sleep(0)
            raise RuntimeError("boom")
        return await slow(calls, "item").func(node_input)

    wf = Workflow(name="wf", edges=[("START", node(work, parallel_worker=True))])
    result = await asyncio.wait_for(Runner(wf, store=store).run([0, 1, 2]), timeout=FOREVER / 3)

    assert result.status == "failed"
    assert calls == {"attempt": 1, "fail": 1, "item started": 2, "item cancelled": 2}


async def test_a_failing_node_cancels_a_nested_workflow_beside_it(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    calls["attempt"] = 1
    inner = Workflow(name="inner", edges=[("START", slow(calls))])
    wf = Workflow(name="wf", edges=[("START", (failing(calls), inner), JoinNode(name="join"))])

    result = await run_bounded(Runner(wf, store=store))

    assert result.status == "failed"
    assert calls == {"attempt": 1, "fail": 1, "slow started": 1, "slow cancelled": 1}


async def test_a_retry_runs_the_cancelled_sibling_again(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    calls["attempt"] = 1
    broken = {"on": True}

    async def fail_once(node_input: Any) -> str:
        await asyncio.sleep(0)
        if broken["on"]:
            raise RuntimeError("boom")
        return "fixed"

    wf = Workflow(name="wf", edges=[("START", (node(fail_once), slow(calls)), JoinNode(name="join"))])
    runner = Runner(wf, store=store)
    failed = await run_bounded(runner)
    assert failed.status == "failed"

    broken["on"] = False
    calls["attempt"] = 2
    retried = await runner.resume(failed.session_id, {})

    assert retried.status == "completed"
    assert retried.output == {"fail_once": "fixed", "slow": "slow"}
    assert calls["slow finished"] == 1
