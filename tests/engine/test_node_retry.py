"""Failures an operator acts on: the traceback kept, one failed node retried (with an edited
input), a cancel's reason; bad requests change nothing."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

import pytest
from pydantic import BaseModel

from engine import START, Context, JoinNode, Runner, Workflow, node
from engine.errors import InvalidInputError, NotFailedNodeError, SessionStateError, ValueLimitError


class Order(BaseModel):
    sku: str
    quantity: int


def ledger_locked(order: Order) -> dict[str, Any]:
    if order.quantity > 10:
        raise RuntimeError(f"the ledger refuses {order.quantity} of {order.sku}")
    return {"posted": order.sku, "quantity": order.quantity}


async def test_a_failed_attempt_keeps_its_traceback_and_input() -> None:
    runner = Runner(Workflow(name="orders", edges=[(START, node(ledger_locked, name="post"))]))
    failed = await runner.run({"sku": "A-1", "quantity": 12})
    assert failed.status == "failed"
    [error] = [e for e in await runner.store.list_events(failed.session_id) if e.kind == "error"]
    assert error.node_path == "orders@1/post@1"
    assert error.error is not None and error.error.traceback is not None
    assert "Traceback (most recent call last)" in error.error.traceback
    assert "in ledger_locked" in error.error.traceback
    assert "RuntimeError: the ledger refuses 12 of A-1" in error.error.traceback
    assert error.input == {"sku": "A-1", "quantity": 12}
    assert list(runner.failed_nodes(await runner.store.list_events(failed.session_id))) == ["orders@1/post@1"]


async def test_retry_with_an_edited_input_reruns_the_node_on_it_and_records_who() -> None:
    runner = Runner(Workflow(name="orders", edges=[(START, node(ledger_locked, name="post"))]))
    failed = await runner.run({"sku": "A-1", "quantity": 12})
    done = await runner.retry(
        failed.session_id, "orders@1/post@1", {"sku": "A-1", "quantity": 3}, actor="olga", reason="split"
    )
    assert (done.status, done.output) == ("completed", {"posted": "A-1", "quantity": 3})
    events = await runner.store.list_events(failed.session_id)
    [retry] = [e for e in events if e.kind == "retry"]
    assert (retry.author, retry.node_path, retry.input, retry.message) == (
        "olga",
        "orders@1/post@1",
        {"sku": "A-1", "quantity": 3},
        "split",
    )
    assert runner.failed_nodes(events) == {}


async def test_a_refused_retry_writes_nothing() -> None:
    runner = Runner(Workflow(name="orders", edges=[(START, node(ledger_locked, name="post"))]))
    failed = await runner.run({"sku": "A-1", "quantity": 12})
    before = len(await runner.store.list_events(failed.session_id))
    with pytest.raises(NotFailedNodeError, match="orders@1/post@1"):
        await runner.record_retry(failed.session_id, "orders@1/nothing@1")
    with pytest.raises(InvalidInputError, match="quantity"):
        await runner.record_retry(failed.session_id, "orders@1/post@1", {"sku": "A-1", "quantity": "many"})
    with pytest.raises(ValueLimitError):
        await runner.record_retry(failed.session_id, "orders@1/post@1", {"sku": "\x00", "quantity": 1})
    with pytest.raises(InvalidInputError, match="needs the failed node"):
        await runner.record_retry(failed.session_id, None, {"sku": "A-1", "quantity": 1})
    with pytest.raises(ValueLimitError, match="reason"):
        await runner.record_retry(failed.session_id, reason="x" * 5000)
    assert len(await runner.store.list_events(failed.session_id)) == before
    done = await runner.run({"sku": "B-2", "quantity": 1})
    with pytest.raises(SessionStateError, match="only a failed run"):
        await runner.record_retry(done.session_id)


async def test_retrying_the_failed_branch_of_a_fan_out_leaves_the_completed_ones() -> None:
    calls: Counter[str] = Counter()
    broken = {"on": True}

    def steady(node_input: int) -> int:
        calls["steady"] += 1
        return node_input

    def shaky(node_input: int) -> int:
        calls["shaky"] += 1
        if broken["on"] or node_input < 0:
            raise RuntimeError("down")
        return node_input * 10

    def also_steady(node_input: int) -> int:
        calls["also_steady"] += 1
        return node_input + 1

    def report(node_input: dict[str, Any]) -> dict[str, Any]:
        return node_input

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (steady, shaky, also_steady), join, report)]))
    failed = await runner.run(2)
    assert failed.status == "failed"
    assert list(runner.failed_nodes(await runner.store.list_events(failed.session_id))) == ["wf@1/shaky@1"]
    broken["on"] = False
    done = await runner.retry(failed.session_id, "wf@1/shaky@1", 5, actor="olga")
    assert done.output == {"steady": 2, "shaky": 50, "also_steady": 3}
    assert calls == {"steady": 1, "also_steady": 1, "shaky": 2}


async def test_retrying_a_failed_dynamic_child_with_an_edited_input() -> None:
    calls: Counter[str] = Counter()

    def fetch(item: int) -> int:
        calls[f"fetch {item}"] += 1
        if item < 0:
            raise ValueError(f"no such item {item}")
        return item * 2

    @node(rerun_on_resume=True)
    async def collect(ctx: Context, items: list[int]) -> list[int]:
        return list(await asyncio.gather(*(ctx.run_node(fetch, item) for item in items)))

    runner = Runner(Workflow(name="dyn", edges=[(START, collect)]))
    failed = await runner.run([1, -2, 3])
    assert failed.status == "failed"
    events = await runner.store.list_events(failed.session_id)
    [(path, error)] = runner.failed_nodes(events).items()
    assert path == "dyn@1/collect@1/fetch@2" and error.input == -2
    done = await runner.retry(failed.session_id, path, 2, actor="olga")
    assert done.output == [2, 4, 6]
    assert calls == {"fetch 1": 1, "fetch -2": 1, "fetch 2": 1, "fetch 3": 1}


async def test_a_cancel_keeps_who_and_why() -> None:
    runner = Runner(Workflow(name="orders", edges=[(START, node(ledger_locked, name="post"))]))
    failed = await runner.run({"sku": "A-1", "quantity": 12})
    with pytest.raises(ValueLimitError, match="reason"):
        await runner.cancel(failed.session_id, actor="olga", reason="x" * 5000)
    assert (await runner.result(failed.session_id)).status == "failed"
    cancelled = await runner.cancel(failed.session_id, actor="olga", reason="duplicate order")
    assert cancelled.status == "cancelled"
    status = (await runner.store.list_events(failed.session_id))[-1]
    assert (status.status, status.author, status.message) == ("cancelled", "olga", "duplicate order")
