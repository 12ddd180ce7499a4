"""The workflow's output is in the log once: the run-finished status points at the event carrying it."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel

from engine import START, Context, Event, InMemoryEventStore, JoinNode, RequestInput, Runner, Workflow, node

from .builders import single


def carriers(events: list[Event], value: Any) -> list[Event]:
    """Every event whose JSON holds ``value`` anywhere."""
    needle = json.dumps(value, separators=(",", ":"))
    return [e for e in events if needle in e.model_dump_json()]


async def assert_output_once(runner: Runner, session_id: str, output: Any) -> Event:
    """The log holds ``output`` once; the completed status points at that event; reads agree."""
    events = await runner.store.list_events(session_id)
    [status] = [e for e in events if e.kind == "status" and e.status == "completed"]
    assert status.output is None
    [carrier] = carriers(events, output)
    assert status.output_seq == carrier.seq
    assert f"{runner.workflow.name}@1" in (carrier.output_for or [])
    assert (await runner.result(session_id)).output == output
    return carrier


async def test_a_chain_keeps_its_output_in_the_terminal_event_only() -> None:
    def a(node_input: int) -> int:
        return node_input + 1

    def b(node_input: int) -> dict[str, Any]:
        return {"total": node_input * 100, "words": ["unique-output-marker"]}

    runner = Runner(Workflow(name="wf", edges=[(START, a, b)]))
    result = await runner.run(1)

    assert result.output == {"total": 200, "words": ["unique-output-marker"]}
    carrier = await assert_output_once(runner, result.session_id, result.output)
    assert carrier.node_path == "wf@1/b@1"


async def test_a_large_output_is_stored_once() -> None:
    big = "x" * 200_000

    def make(node_input: Any) -> str:
        return big

    runner = Runner(single(node(make, name="make")))
    result = await runner.run()

    events = await runner.store.list_events(result.session_id)
    assert sum(len(e.model_dump_json()) for e in events) < len(big) * 1.1
    await assert_output_once(runner, result.session_id, big)


async def test_a_delegated_output_is_pointed_at_in_the_childs_event() -> None:
    @node
    def worker(node_input: Any) -> str:
        return "delegated-marker"

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context) -> None:
        await ctx.run_node(worker, use_as_output=True)

    runner = Runner(single(delegator))
    result = await runner.run()

    carrier = await assert_output_once(runner, result.session_id, "delegated-marker")
    assert carrier.node_path == "wf@1/delegator@1/worker@1"


async def test_after_a_resume_the_status_points_at_the_output_of_an_earlier_turn() -> None:
    def first(node_input: Any) -> str:
        return "early-marker"

    async def second(node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(interrupt_id="go")

    def tail(node_input: Any) -> None:
        return None

    s = node(second, name="second")
    f = node(first, name="first")
    t = node(tail, name="tail")
    runner = Runner(Workflow(name="wf", edges=[(START, (f, s)), (s, t)]))
    waiting = await runner.run()
    assert waiting.status == "waiting"

    done = await runner.resume(waiting.session_id, {"go": "ok"})

    assert (done.status, done.output) == ("completed", "early-marker")
    carrier = await assert_output_once(runner, waiting.session_id, "early-marker")
    assert carrier.seq < waiting_last_seq(await runner.store.list_events(waiting.session_id))


def waiting_last_seq(events: list[Event]) -> int:
    return next(e.seq for e in events if e.kind == "status" and e.status == "waiting")


async def test_an_answer_that_becomes_the_output_is_pointed_at() -> None:
    async def approve(node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(interrupt_id="ok")

    runner = Runner(single(node(approve, name="approve")))
    waiting = await runner.run()
    done = await runner.resume(waiting.session_id, {"ok": {"answer-marker": True}})

    assert done.output == {"answer-marker": True}
    events = await runner.store.list_events(waiting.session_id)
    [status] = [e for e in events if e.kind == "status" and e.status == "completed"]
    carrier = next(e for e in events if e.seq == status.output_seq)
    assert carrier.kind == "completed" and carrier.output == {"answer-marker": True}
    assert (await runner.result(waiting.session_id)).output == {"answer-marker": True}


async def test_a_nested_workflows_terminal_carries_the_outer_output() -> None:
    def leaf(node_input: Any) -> str:
        return "nested-marker"

    inner = Workflow(name="inner", edges=[(START, node(leaf, name="leaf"))])
    runner = Runner(Workflow(name="outer", edges=[(START, inner)]))
    result = await runner.run()

    carrier = await assert_output_once(runner, result.session_id, "nested-marker")
    assert carrier.node_path == "outer@1/inner@1/leaf@1"


async def test_a_join_and_a_model_output_read_back_the_same() -> None:
    class Total(BaseModel):
        total: int

    def one(node_input: Any) -> int:
        return 1

    def two(node_input: Any) -> int:
        return 2

    def add(node_input: dict[str, int]) -> Total:
        return Total(total=sum(node_input.values()))

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (one, two), join, add)]))
    result = await runner.run()

    assert result.output == Total(total=3)
    events = await runner.store.list_events(result.session_id)
    [status] = [e for e in events if e.kind == "status" and e.status == "completed"]
    assert next(e for e in events if e.seq == status.output_seq).node_path == "wf@1/add@1"
    assert (await runner.result(result.session_id)).output == {"total": 3}


async def test_a_run_without_output_points_at_nothing() -> None:
    def quiet(node_input: Any) -> None:
        return None

    runner = Runner(single(node(quiet, name="quiet")))
    result = await runner.run()
    [status] = [e for e in await runner.store.list_events(result.session_id) if e.kind == "status"]
    assert (status.output, status.output_seq, result.output) == (None, None, None)


@pytest.mark.parametrize("old_output", ["from-the-status", {"k": [1]}])
async def test_logs_whose_status_carries_the_output_still_read_back(old_output: Any) -> None:
    def make(node_input: Any) -> Any:
        return old_output

    workflow = single(node(make, name="make"))
    runner = Runner(workflow)
    result = await runner.run()
    assert isinstance(runner.store, InMemoryEventStore)
    dumped = runner.store.dump(result.session_id)
    status = dumped["events"][-1]
    status.pop("output_seq")
    status["output"] = old_output  # as written before the status pointed at the output

    reread = Runner(workflow, store=InMemoryEventStore.load(dumped))
    assert (await reread.result(result.session_id)).output == old_output
