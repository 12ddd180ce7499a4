"""Issue 25, item 18: ``ctx.run_node`` of a failing child raises ADK's ``DynamicNodeFailError``."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from engine import Context, DynamicNodeFailError, InMemoryEventStore, Runner, node

from .builders import single


class OutOfStock(Exception):
    def __init__(self, sku: str, *, warehouse: str) -> None:
        super().__init__(f"{sku} is out of stock at {warehouse}")
        self.sku = sku


async def test_a_parent_catches_the_failure_and_reads_the_childs_error(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def reserve(node_input: str) -> None:
        calls["reserve"] += 1
        raise OutOfStock(node_input, warehouse="north")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> dict[str, Any]:
        try:
            await ctx.run_node(reserve, "sku-1")
        except DynamicNodeFailError as failure:
            error = failure.error
            assert isinstance(error, OutOfStock)
            return {"sku": error.sku, "message": str(error), "at": failure.error_node_path}
        return {}

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.status == "completed"
    assert result.output == {
        "sku": "sku-1",
        "message": "sku-1 is out of stock at north",
        "at": "wf@1/orch@1/reserve@1",
    }
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/orch@1/reserve@1"]


async def test_the_failure_is_also_the_childs_error_class_for_existing_except_clauses(
    store: InMemoryEventStore,
) -> None:
    @node
    def broken(node_input: Any) -> None:
        raise KeyError("missing")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        caught = []
        try:
            await ctx.run_node(broken)
        except KeyError as error:
            caught.append(f"{type(error).__name__}:{error}:{isinstance(error, DynamicNodeFailError)}")
        results = await asyncio.gather(ctx.run_node(broken, run_id="again"), return_exceptions=True)
        caught.append(type(getattr(results[0], "error", None)).__name__)
        return caught

    result = await Runner(single(orch), store=store).run()

    assert result.output == ["KeyError:'missing':True", "KeyError"]


async def test_an_uncaught_failure_fails_the_run_with_the_childs_error_written_once(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def broken(node_input: Any) -> None:
        raise OutOfStock("sku-2", warehouse="south")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        return await ctx.run_node(broken)

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.status == "failed"
    assert result.error_type == "OutOfStock"
    log = await read_log(runner, result.session_id)
    assert [(e.node_path, e.error.type) for e in log.errors() if e.error] == [
        ("wf@1/orch@1/broken@1", "OutOfStock")
    ]
