"""Dynamic workflows resume from the log alone: in another process, reading the log once."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine import Context, InMemoryEventStore, RequestInput, Runner, Workflow, node

ROOT = Path(__file__).resolve().parents[2]
CALLS: Counter[str] = Counter()
FAILING_SKUS: set[str] = set()  # set in this process only: a subprocess starts with none


class Price(BaseModel):
    sku: str
    cents: int


@node
def price(node_input: str) -> Price:
    CALLS["price"] += 1
    if node_input in FAILING_SKUS:
        raise ConnectionError(f"no price for {node_input}")
    return Price(sku=node_input, cents=100 * len(node_input))


@node
async def approve(node_input: str) -> AsyncGenerator[Any, None]:
    CALLS["approve"] += 1
    yield RequestInput(message=f"approve {node_input}?", interrupt_id=f"approve-{node_input}")


@node(rerun_on_resume=True)
async def confirm(ctx: Context, node_input: str) -> AsyncGenerator[Any, None]:
    CALLS["confirm"] += 1
    if "confirm" in ctx.resume_inputs:
        yield f"{node_input} confirmed by {ctx.resume_inputs['confirm']}"
    else:
        yield RequestInput(message="confirm?", interrupt_id="confirm")


@node(rerun_on_resume=True)
async def orch(ctx: Context, node_input: list[str]) -> dict[str, Any]:
    CALLS["orch"] += 1
    prices = await asyncio.gather(*(ctx.run_node(price, sku) for sku in node_input))
    assert all(isinstance(p, Price) for p in prices)  # restored as models in any process
    *decisions, note = await asyncio.gather(
        *(ctx.run_node(approve, sku) for sku in node_input), ctx.run_node(confirm, "order")
    )
    return {"total": sum(p.cents for p in prices), "decisions": decisions, "note": note}


WORKFLOW = Workflow(name="orders", edges=[("START", orch)])

RESUME_IN_SUBPROCESS = """
import asyncio, importlib.util, json, sys
spec = importlib.util.spec_from_file_location("durability_case", sys.argv[1])
case = importlib.util.module_from_spec(spec)
spec.loader.exec_module(case)
from engine import InMemoryEventStore, Runner
data = json.loads(open(sys.argv[2]).read())
answers = json.loads(sys.argv[3])
store = InMemoryEventStore.load(data)
result = asyncio.run(Runner(case.WORKFLOW, store=store).resume(data["session_id"], answers, actor="ops"))
print(json.dumps({
    "status": result.status,
    "output": result.output,
    "error": result.error,
    "pending": sorted(i.id for i in result.interrupts),
    "calls": dict(case.CALLS),
    "log": store.dump(data["session_id"]),
}))
"""


def resume_elsewhere(tmp_path: Path, log: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
    saved = tmp_path / "log.json"
    saved.write_text(json.dumps(log))
    done = subprocess.run(
        [sys.executable, "-c", RESUME_IN_SUBPROCESS, __file__, str(saved), json.dumps(answers)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


async def test_resume_in_a_new_process_from_the_json_log_runs_no_completed_child_again(
    tmp_path: Path, store: InMemoryEventStore
) -> None:
    CALLS.clear()
    first = await Runner(WORKFLOW, store=store).run(["ab", "cde"])
    assert first.status == "waiting"
    assert sorted(i.id for i in first.interrupts) == ["approve-ab", "approve-cde", "confirm"]
    assert CALLS == {"orch": 1, "price": 2, "approve": 2, "confirm": 1}

    second = resume_elsewhere(tmp_path, store.dump(first.session_id), {"approve-cde": "no"})
    assert second["status"] == "waiting", second["error"]
    assert second["pending"] == ["approve-ab", "confirm"]
    assert second["calls"] == {"orch": 1}

    third = resume_elsewhere(tmp_path, second["log"], {"confirm": "ops", "approve-ab": "yes"})
    assert third["status"] == "completed", third["error"]
    assert third["output"] == {"total": 500, "decisions": ["yes", "no"], "note": "order confirmed by ops"}
    assert third["calls"] == {"orch": 1, "confirm": 1}


async def test_a_run_that_failed_here_is_retried_in_a_new_process_from_the_json_log(
    tmp_path: Path, store: InMemoryEventStore
) -> None:
    CALLS.clear()
    FAILING_SKUS.add("cde")
    try:
        failed = await Runner(WORKFLOW, store=store).run(["ab", "cde"])
    finally:
        FAILING_SKUS.clear()
    assert failed.status == "failed"
    assert "no price for cde" in (failed.error or "")

    retried = resume_elsewhere(tmp_path, store.dump(failed.session_id), {})

    assert retried["status"] == "waiting", retried["error"]
    assert retried["pending"] == ["approve-ab", "approve-cde", "confirm"]
    assert retried["calls"] == {"orch": 1, "price": 1, "approve": 2, "confirm": 1}


async def test_a_recorded_log_kept_next_to_the_tests_still_resumes() -> None:
    """The log in recorded/ was written by an earlier engine: two orders priced, one approval answered."""
    CALLS.clear()
    saved = json.loads((Path(__file__).parent / "recorded" / "dynamic_orders_waiting.json").read_text())
    runner = Runner(WORKFLOW, store=InMemoryEventStore.load(saved))

    waiting = await runner.result("recorded-orders")
    assert sorted(i.id for i in waiting.interrupts) == ["approve-ab", "confirm"]
    result = await runner.resume("recorded-orders", {"approve-ab": "yes", "confirm": "ops"})

    assert result.output == {"total": 500, "decisions": ["yes", "no"], "note": "order confirmed by ops"}
    assert CALLS == {"orch": 1, "confirm": 1}


async def test_json_log_round_trips_without_loss(store: InMemoryEventStore) -> None:
    CALLS.clear()
    first = await Runner(WORKFLOW, store=store).run(["ab"])
    saved = store.dump(first.session_id)

    reloaded = InMemoryEventStore.load(json.loads(json.dumps(saved)))

    assert reloaded.dump(first.session_id) == saved
    result = await Runner(WORKFLOW, store=reloaded).resume(
        first.session_id, {"approve-ab": "ok", "confirm": "me"}
    )
    assert result.output == {"total": 200, "decisions": ["ok"], "note": "order confirmed by me"}


class CountingStore(InMemoryEventStore):
    """An in-memory store that counts how often a session's log is read."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0

    async def list_events(self, session_id: str, after_seq: int = 0) -> list[Any]:
        self.reads += 1
        return await super().list_events(session_id, after_seq)


async def test_each_resume_reads_the_log_once() -> None:
    CALLS.clear()
    store = CountingStore()
    runner = Runner(WORKFLOW, store=store)
    first = await runner.run(["a", "b", "c"])

    for answers in ({"approve-b": 1}, {"approve-a": 2}, {"confirm": 3}, {"approve-c": 4}):
        store.reads = 0
        result = await runner.resume(first.session_id, answers)
        assert store.reads == 1

    assert result.status == "completed"


async def test_retrying_a_failed_dynamic_run_reads_the_log_once(calls: Counter[str]) -> None:
    @node
    def flaky(node_input: int) -> int:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise ConnectionError("down")
        return node_input

    @node(rerun_on_resume=True)
    async def fan(ctx: Context) -> list[int]:
        return list(await asyncio.gather(*(ctx.run_node(flaky, i) for i in range(5))))

    store = CountingStore()
    runner = Runner(Workflow(name="wf", edges=[("START", fan)]), store=store)
    failed = await runner.run()
    assert failed.status == "failed"

    store.reads = 0
    result = await runner.resume(failed.session_id, {})

    assert result.output == [0, 1, 2, 3, 4]
    assert calls["flaky"] == 6
    assert store.reads == 1


async def test_a_longer_log_is_read_once_and_replayed_children_write_nothing() -> None:
    @node
    def step(node_input: int) -> int:
        return node_input + 1

    @node(rerun_on_resume=True)
    async def chain(ctx: Context, node_input: int) -> AsyncGenerator[Any, None]:
        value = node_input
        for _ in range(200):
            value = await ctx.run_node(step, value)
        yield RequestInput(interrupt_id="done?") if "done?" not in ctx.resume_inputs else value

    store = CountingStore()
    runner = Runner(Workflow(name="wf", edges=[("START", chain)]), store=store)
    first = await runner.run(0)
    assert first.status == "waiting"

    store.reads = 0
    before = (await store.get_session(first.session_id)).last_seq
    result = await runner.resume(first.session_id, {"done?": True})

    assert result.output == 200
    assert store.reads == 1
    written = await store.list_events(first.session_id, after_seq=before)
    assert not [e for e in written if e.node_path.startswith("wf@1/chain@1/")]  # 200 children fast-forwarded
