"""Interrupts seen from the caller: catching NodeInterruptedError, re-asking, delegating, loops."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

import pytest

from engine import (
    Context,
    Event,
    InMemoryEventStore,
    NodeInterruptedError,
    RequestInput,
    Runner,
    Workflow,
    node,
)

from .builders import asker, single

# -- NodeInterruptedError in the caller -------------------------------------------------------


async def test_interrupt_is_not_swallowed_by_except_exception_in_the_caller(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        try:
            return f"got {await ctx.run_node(ask)}"
        except Exception:  # an interrupt is not an error
            return "swallowed"

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    assert first.status == "waiting"

    result = await runner.resume(first.session_id, {"q": "it"})
    assert result.output == "got it"
    assert calls == {"orch": 2, "ask": 1}


async def test_caller_may_catch_the_interrupt_to_record_state_before_re_raising(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        try:
            return f"got {await ctx.run_node(ask)}"
        except NodeInterruptedError:
            ctx.state["waiting_on"] = "ask"
            raise

    runner = Runner(single(orch), store=store)
    first = await runner.run()

    assert first.status == "waiting"
    assert [i.id for i in first.interrupts] == ["q"]
    assert (await read_log(runner, first.session_id)).state() == {"waiting_on": "ask"}
    result = await runner.resume(first.session_id, {"q": "it"})
    assert result.output == "got it"


def catching(how: str, reraise: bool) -> Any:
    """An orchestrator that awaits interrupting children one way and catches the interrupt."""

    @node
    async def ask(node_input: int) -> AsyncGenerator[Any, None]:
        yield RequestInput(interrupt_id=f"q{node_input}")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        try:
            if how == "await":
                return [await ctx.run_node(ask, 1)]
            if how == "gather":
                return list(await asyncio.gather(ctx.run_node(ask, 1), ctx.run_node(ask, 2)))
            return [await asyncio.create_task(ctx.run_node(ask, 1))]
        except NodeInterruptedError:
            ctx.state["asked"] = True
            if reraise:
                raise
            return "skipped"

    return orch


@pytest.mark.parametrize(("how", "asked"), [("await", 1), ("gather", 2), ("awaited task", 1)])
async def test_caller_that_catches_and_re_raises_a_childs_interrupt_waits(
    store: InMemoryEventStore, read_log: Any, how: str, asked: int
) -> None:
    runner = Runner(single(catching(how, reraise=True)), store=store)
    first = await runner.run()

    assert first.status == "waiting", first.error
    assert sorted(i.id for i in first.interrupts) == [f"q{n}" for n in range(1, asked + 1)]
    assert (await read_log(runner, first.session_id)).state() == {"asked": True}
    result = await runner.resume(first.session_id, {i.id: "A" for i in first.interrupts})
    assert result.output == ["A"] * asked


async def test_swallowing_an_awaited_childs_interrupt_does_not_skip_the_question(
    store: InMemoryEventStore,
) -> None:
    runner = Runner(single(catching("await", reraise=False)), store=store)
    first = await runner.run()

    assert first.status == "waiting"  # the returned "skipped" is discarded: the question is pending
    result = await runner.resume(first.session_id, {"q1": "A"})
    assert result.output == ["A"]


@pytest.mark.parametrize("how", ["gather", "awaited task"])
async def test_swallowing_the_interrupt_of_a_child_in_another_task_fails_the_run(
    store: InMemoryEventStore, how: str
) -> None:
    """Documented in docs/engine.md: the engine cannot tell this from a detached child; re-raise instead."""
    result = await Runner(single(catching(how, reraise=False)), store=store).run()

    assert result.status == "failed"
    assert result.error_type == "RuntimeError"
    assert "wf@1/orch@1/ask@1" in (result.error or "")


# -- asking again, delegating, looping ------------------------------------------------------------


async def test_rejected_approval_loop_asks_the_same_interrupt_id_again(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    async def review(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"review{node_input}"] += 1
        yield RequestInput(message=f"draft {node_input} ok?", interrupt_id="approval")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        draft = 1
        while await ctx.run_node(review, draft) != "yes":
            draft += 1
        return f"draft {draft} approved"

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    second = await runner.resume(first.session_id, {"approval": "no"})
    assert [(i.id, i.node_path, i.message) for i in second.interrupts] == [
        ("approval", "wf@1/orch@1/review@2", "draft 2 ok?")
    ]
    third = await runner.resume(first.session_id, {"approval": "no"})
    assert third.interrupts[0].node_path == "wf@1/orch@1/review@3"

    result = await runner.resume(first.session_id, {"approval": "yes"})

    assert result.output == "draft 3 approved"
    assert calls == {"orch": 4, "review1": 1, "review2": 1, "review3": 1}
    outputs = (await read_log(runner, first.session_id)).outputs()
    assert not [path for path in outputs if "/review@" in path]  # answers are no output events (ADK)


async def test_use_as_output_child_that_interrupts_gives_its_answer_as_the_callers_output(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context) -> None:
        calls["delegator"] += 1
        await ctx.run_node(ask, use_as_output=True)

    @node
    def after(node_input: Any) -> str:
        return f"after {node_input}"

    runner = Runner(Workflow(name="wf", edges=[("START", delegator, after)]), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"q": "answer"})

    assert result.output == "after answer"
    assert calls == {"delegator": 2, "ask": 1}


async def test_use_as_output_child_completed_before_an_interrupt_is_still_the_output_after_resume(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def worker(node_input: Any) -> str:
        calls["worker"] += 1
        return "from worker"

    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context) -> None:
        calls["delegator"] += 1
        await ctx.run_node(worker, use_as_output=True)
        await ctx.run_node(ask)

    runner = Runner(single(delegator), store=store)
    first = await runner.run()
    assert first.status == "waiting"
    result = await runner.resume(first.session_id, {"q": "ignored"})

    assert result.output == "from worker"
    assert calls == {"delegator": 2, "worker": 1, "ask": 1}


async def test_orchestrator_in_a_graph_loop_numbers_children_per_activation(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def child(node_input: int) -> int:
        calls["child"] += 1
        return node_input + 1

    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def step(ctx: Context, node_input: int) -> Any:
        calls["step"] += 1
        value = await ctx.run_node(child, node_input)
        if value < 2:
            return Event(output=value, route="again")
        return Event(output=await ctx.run_node(ask), route="done")

    @node
    def finish(node_input: Any) -> str:
        return f"finished: {node_input}"

    wf = Workflow(name="wf", edges=[("START", step), (step, {"again": step, "done": finish})])
    runner = Runner(wf, store=store)
    first = await runner.run(0)
    assert first.interrupts[0].node_path == "wf@1/step@2/ask@1"

    result = await runner.resume(first.session_id, {"q": "ok"})

    assert result.output == "finished: ok"
    assert calls == {"step": 3, "child": 2, "ask": 1}
    log = await read_log(runner, first.session_id)
    assert log.outputs()["wf@1/step@1/child@1"] == 1
    assert log.outputs()["wf@1/step@2/child@1"] == 2
