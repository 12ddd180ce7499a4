"""Issue 25, items 13-16: human input and resume as google-adk 2.13 does them."""

from __future__ import annotations

import asyncio
from collections import Counter
from typing import Any

from engine import START, Context, Event, RequestInput, Runner, Workflow, node


def ask_q(calls: Counter[str]) -> Any:
    async def ask(node_input: str) -> Any:
        calls["ask"] += 1
        yield RequestInput(interrupt_id="q", message=f"about {node_input}?")

    return node(ask)


# -- item 13: a node triggered again while it waits ------------------------------------------


async def test_a_trigger_that_comes_while_the_node_waits_runs_after_its_answer(
    calls: Counter[str], read_log: Any
) -> None:
    def a(node_input: str) -> str:
        return "from a"

    def b(node_input: str) -> str:
        return "from b"

    def after(ctx: Context, node_input: str) -> None:
        ctx.state["seen"] = [*ctx.state.get("seen", []), node_input]

    wf = Workflow(name="wf", edges=[(START, (node(a), node(b)), ask_q(calls), node(after))])
    runner = Runner(wf)

    first = await runner.run("go")
    assert first.status == "waiting"
    assert [(i.id, i.node_path, i.message) for i in first.interrupts] == [
        ("q", "wf@1/ask@1", "about from a?")
    ]
    assert calls["ask"] == 1  # the second trigger did not start a second execution

    second = await runner.resume(first.session_id, {"q": "first"})
    assert second.status == "waiting"  # the held trigger ran and asks the same id again
    assert [(i.id, i.node_path, i.message) for i in second.interrupts] == [
        ("q", "wf@1/ask@2", "about from b?")
    ]

    third = await runner.resume(first.session_id, {"q": "second"})
    assert third.status == "completed", third.error
    log = await read_log(runner, first.session_id)
    assert [e.state for e in log.events if e.state and "seen" in e.state][-1] == {"seen": ["first", "second"]}
    assert calls["ask"] == 2


async def test_a_trigger_that_comes_while_the_node_runs_waits_for_it(calls: Counter[str]) -> None:
    active: list[int] = []

    async def work(node_input: str) -> str:
        active.append(1)
        calls["overlap"] = max(calls["overlap"], len(active))
        await asyncio.sleep(0.01)
        active.pop()
        return node_input

    def a(node_input: str) -> str:
        return "a"

    def b(node_input: str) -> str:
        return "b"

    def last(ctx: Context, node_input: str) -> None:
        ctx.state["order"] = [*ctx.state.get("order", []), node_input]

    wf = Workflow(name="wf", edges=[(START, (node(a), node(b)), node(work), node(last))])
    result = await Runner(wf).run("go")

    assert result.status == "completed", result.error
    assert calls["overlap"] == 1


# -- item 14: partial answers -------------------------------------------------------------------


async def test_a_partial_answer_leaves_the_other_question_pending_in_the_resumed_turns_events(
    read_log: Any,
) -> None:
    @node(rerun_on_resume=True)
    async def ask_two(ctx: Context, node_input: Any) -> Any:
        missing = [key for key in ("q1", "q2") if key not in ctx.resume_inputs]
        if not missing:
            yield dict(ctx.resume_inputs)
            return
        for key in missing:
            yield RequestInput(interrupt_id=key, message=f"{key}?")

    runner = Runner(Workflow(name="wf", edges=[(START, ask_two)]))
    first = await runner.run(None)
    before = len((await read_log(runner, first.session_id)).events)

    second = await runner.resume(first.session_id, {"q1": "one"})

    assert second.status == "waiting"
    assert [i.id for i in second.interrupts] == ["q2"]
    turn = (await read_log(runner, first.session_id)).events[before:]
    asked = [e.interrupt for e in turn if e.kind == "interrupt" and e.interrupt is not None]
    assert [(i.id, i.node_path, i.message) for i in asked] == [("q2", "wf@1/ask_two@1", "q2?")]

    third = await runner.resume(first.session_id, {"q2": "two"})
    assert third.output == {"q1": "one", "q2": "two"}


# -- items 15 and 16: fast-forwarding an answered rerun_on_resume=False node ----------------------


async def test_a_route_set_with_ctx_route_before_asking_is_kept_when_the_answer_comes(
    calls: Counter[str],
) -> None:
    async def ask(ctx: Context, node_input: Any) -> Any:
        ctx.route = "go"
        yield RequestInput(interrupt_id="q")

    def go(node_input: str) -> str:
        calls["go"] += 1
        return f"went with {node_input}"

    def stop(node_input: str) -> str:
        calls["stop"] += 1
        return "stopped"

    asker = node(ask)
    wf = Workflow(name="wf", edges=[(START, asker), (asker, {"go": node(go), "stop": node(stop)})])
    runner = Runner(wf)
    first = await runner.run(None)

    result = await runner.resume(first.session_id, {"q": "yes"})

    assert result.status == "completed", result.error
    assert result.output == "went with yes"
    assert calls == {"go": 1}


async def test_a_route_yielded_before_asking_is_kept_when_the_answer_comes() -> None:
    async def ask(node_input: Any) -> Any:
        yield Event(route="go")
        yield RequestInput(interrupt_id="q")

    def go(node_input: str) -> str:
        return f"went with {node_input}"

    asker = node(ask)
    wf = Workflow(name="wf", edges=[(START, asker), (asker, {"go": node(go)})])
    runner = Runner(wf)
    first = await runner.run(None)

    result = await runner.resume(first.session_id, {"q": "yes"})

    assert result.output == "went with yes"
    assert (await runner.result(first.session_id)).output == "went with yes"


async def test_an_answered_node_writes_no_output_event_of_its_own_and_replays_its_answer(
    calls: Counter[str], read_log: Any
) -> None:
    def after(node_input: Any) -> str:
        calls["after"] += 1
        return f"after {node_input}"

    wf = Workflow(name="wf", edges=[(START, ask_q(calls), node(after), ask_later())])
    runner = Runner(wf)
    first = await runner.run("x")
    second = await runner.resume(first.session_id, {"q": "ann"})
    assert second.status == "waiting"

    log = await read_log(runner, first.session_id)
    at_ask = [(e.kind, e.output) for e in log.events if e.node_path == "wf@1/ask@1"]
    assert at_ask == [("started", None), ("interrupt", None), ("answer", None), ("completed", None)]
    assert log.outputs()["wf@1/after@1"] == "after ann"

    third = await runner.resume(first.session_id, {"later": "done"})  # replays ask@1 from the log
    assert third.status == "completed", third.error
    assert third.output == "done"
    assert calls == {"ask": 1, "after": 1}


def ask_later() -> Any:
    async def later(node_input: Any) -> Any:
        yield RequestInput(interrupt_id="later")

    return node(later)
