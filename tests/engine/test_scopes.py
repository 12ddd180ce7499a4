"""Scopes: nested workflows re-enter on resume, events are authored by the nearest workflow."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from typing import Any

from engine import Context, InMemoryEventStore, RequestInput, Runner, Workflow, node


def counted(calls: Counter[str], name: str, fmt: str = "{name}({x})") -> Any:
    def body(node_input: Any) -> str:
        calls[name] += 1
        return fmt.format(name=name, x=node_input)

    return node(body, name=name)


async def test_nested_workflow_with_an_interrupt_re_enters_and_replays_its_children(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any, turns: Callable[..., Any]
) -> None:
    @node
    async def ask(node_input: str) -> AsyncGenerator[Any, None]:
        calls["ask"] += 1
        yield RequestInput(message=f"ok to use {node_input}?", interrupt_id="q")

    inner = Workflow(name="inner", edges=[("START", counted(calls, "prep"), ask, counted(calls, "post"))])
    outer = Workflow(name="outer", edges=[("START", counted(calls, "first"), inner, counted(calls, "last"))])
    runner = Runner(outer, store=store)

    first = await runner.run("x")
    assert first.status == "waiting"
    assert first.interrupts[0].node_path == "outer@1/inner@1/ask@1"
    assert first.interrupts[0].message == "ok to use prep(first(x))?"

    result = await runner.resume(first.session_id, {"q": "yes"}, actor="alice")

    assert result.output == "last(post(yes))"
    assert calls == {"first": 1, "prep": 1, "ask": 1, "post": 1, "last": 1}
    log = await read_log(runner, first.session_id)
    second = turns(log)[1]
    assert "outer@1/inner@1" in second.started()
    assert "outer@1/inner@1/prep@1" not in second.started()
    assert "outer@1/first@1" not in second.started()
    authors = {e.node_path: e.author for e in log.of_kind("started", "completed")}
    assert authors["outer@1/first@1"] == "outer"
    assert authors["outer@1/inner@1"] == "outer"
    assert authors["outer@1/inner@1/prep@1"] == "inner"
    assert authors["outer@1/inner@1/post@1"] == "inner"
    assert authors["outer@1/last@1"] == "outer"
    (answer,) = log.of_kind("answer")
    assert answer.author == "alice"


async def test_dynamic_children_are_authored_by_the_nearest_workflow(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def leaf(node_input: Any) -> str:
        return "leaf"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        return [await ctx.run_node(leaf), await ctx.run_node(leaf)]

    inner = Workflow(name="inner", edges=[("START", orch)])

    @node(rerun_on_resume=True)
    async def top(ctx: Context) -> list[Any]:
        return [await ctx.run_node(leaf), await ctx.run_node(inner)]

    runner = Runner(Workflow(name="outer", edges=[("START", top)]), store=store)
    result = await runner.run()

    assert result.output == ["leaf", ["leaf", "leaf"]]
    log = await read_log(runner, result.session_id)
    authors = {e.node_path: e.author for e in log.events if e.kind in ("started", "completed")}
    assert authors == {
        "outer@1": "outer",
        "outer@1/top@1": "outer",
        "outer@1/top@1/leaf@1": "outer",
        "outer@1/top@1/inner@1": "outer",
        "outer@1/top@1/inner@1/orch@1": "inner",
        "outer@1/top@1/inner@1/orch@1/leaf@1": "inner",
        "outer@1/top@1/inner@1/orch@1/leaf@2": "inner",
    }


async def test_each_run_of_a_nested_workflow_has_its_own_scope(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    inner = Workflow(name="inner", edges=[("START", counted(calls, "step"))])

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        return list(await asyncio.gather(ctx.run_node(inner, "a"), ctx.run_node(inner, "b")))

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=store)
    result = await runner.run()

    assert result.output == ["step(a)", "step(b)"]
    assert calls["step"] == 2
    outputs = (await read_log(runner, result.session_id)).outputs()
    assert outputs["wf@1/orch@1/inner@1/step@1"] == "step(a)"
    assert outputs["wf@1/orch@1/inner@2/step@1"] == "step(b)"


async def test_interrupt_inside_a_dynamically_run_workflow_resumes_inside_its_scope(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any, turns: Callable[..., Any]
) -> None:
    @node
    async def ask(node_input: str) -> AsyncGenerator[Any, None]:
        calls["ask"] += 1
        yield RequestInput(interrupt_id=f"q-{node_input}")

    inner = Workflow(
        name="inner", edges=[("START", counted(calls, "prep", "{x}"), ask, counted(calls, "post"))]
    )

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        calls["orch"] += 1
        return list(await asyncio.gather(ctx.run_node(inner, "a"), ctx.run_node(inner, "b")))

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=store)
    first = await runner.run()
    assert sorted(i.node_path for i in first.interrupts) == [
        "wf@1/orch@1/inner@1/ask@1",
        "wf@1/orch@1/inner@2/ask@1",
    ]

    second = await runner.resume(first.session_id, {"q-b": "B"})
    assert [i.id for i in second.interrupts] == ["q-a"]
    result = await runner.resume(first.session_id, {"q-a": "A"})

    assert result.output == ["post(A)", "post(B)"]
    assert calls == {"orch": 3, "prep": 2, "ask": 2, "post": 2}
    last_turn = turns(await read_log(runner, first.session_id))[2]
    assert "wf@1/orch@1/inner@1" in last_turn.started()
    assert "wf@1/orch@1/inner@2" in last_turn.started()  # re-entered, though it had completed
    assert "wf@1/orch@1/inner@2/post@1" not in last_turn.started()


async def test_dynamic_children_are_not_throttled_by_max_concurrency(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    active = 0

    @node
    async def child(node_input: int) -> int:
        nonlocal active
        active += 1
        calls["peak"] = max(calls["peak"], active)
        await asyncio.sleep(0.01)
        active -= 1
        return node_input

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[int]:
        return list(await asyncio.gather(*(ctx.run_node(child, i) for i in range(6))))

    inner = Workflow(name="inner", max_concurrency=1, edges=[("START", orch)])
    runner = Runner(Workflow(name="wf", max_concurrency=1, edges=[("START", inner)]), store=store)
    result = await runner.run()

    assert result.output == [0, 1, 2, 3, 4, 5]
    assert calls["peak"] == 6


async def test_parallel_worker_inside_a_dynamically_run_workflow_resumes_item_by_item(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node(parallel_worker=True, max_parallel_workers=2)
    async def check(node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"check{node_input}"] += 1
        if node_input % 2:
            yield RequestInput(interrupt_id=f"odd-{node_input}")
        else:
            yield node_input

    @node
    def total(node_input: list[Any]) -> int:
        calls["total"] += 1
        return sum(node_input)

    inner = Workflow(name="inner", edges=[("START", check, total)])

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: list[int]) -> str:
        calls["orch"] += 1
        return f"total {await ctx.run_node(inner, node_input)}"

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=store)
    first = await runner.run([1, 2, 3, 4])
    assert sorted(i.node_path for i in first.interrupts) == [
        "wf@1/orch@1/inner@1/check@1/check@1",
        "wf@1/orch@1/inner@1/check@1/check@3",
    ]

    await runner.resume(first.session_id, {"odd-3": 30})
    result = await runner.resume(first.session_id, {"odd-1": 10})

    assert result.output == "total 46"
    assert calls == {"orch": 3, "check1": 1, "check2": 1, "check3": 1, "check4": 1, "total": 1}
    log = await read_log(runner, first.session_id)
    authors = {
        e.author for e in log.events if e.kind != "answer" and e.node_path.startswith("wf@1/orch@1/inner@1/")
    }
    assert authors == {"inner"}


async def test_retrying_a_failed_nested_workflow_re_runs_only_its_failed_node(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def flaky(node_input: str) -> str:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise ConnectionError("down")
        return f"flaky({node_input})"

    inner = Workflow(name="inner", edges=[("START", counted(calls, "a"), flaky, counted(calls, "c"))])

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        return await ctx.run_node(inner, "x")

    runner = Runner(Workflow(name="wf", edges=[("START", orch)]), store=store)
    failed = await runner.run()
    assert failed.status == "failed"
    assert "wf@1/orch@1/inner@1/flaky@1" in (failed.error or "")

    result = await runner.resume(failed.session_id, {})

    assert result.output == "c(flaky(a(x)))"
    assert calls == {"orch": 2, "a": 1, "flaky": 2, "c": 1}


async def test_parallel_worker_over_a_workflow_gives_each_item_its_own_scope(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    async def ask(node_input: str) -> AsyncGenerator[Any, None]:
        calls[f"ask-{node_input}"] += 1
        if node_input.startswith("?"):
            yield RequestInput(interrupt_id=node_input)
        else:
            yield node_input

    per_item = Workflow(name="per_item", edges=[("START", counted(calls, "prep", "{x}"), ask)])
    fan = node(per_item, parallel_worker=True, max_parallel_workers=2)

    runner = Runner(Workflow(name="wf", edges=[("START", fan)]), store=store)
    first = await runner.run(["a", "?b", "c"])
    assert [i.node_path for i in first.interrupts] == ["wf@1/per_item@1/per_item@2/ask@1"]

    result = await runner.resume(first.session_id, {"?b": "B"})

    assert result.output == ["a", "B", "c"]
    assert calls == {"prep": 3, "ask-a": 1, "ask-?b": 1, "ask-c": 1}
    log = await read_log(runner, first.session_id)
    authors = {e.node_path: e.author for e in log.of_kind("started", "completed")}
    assert authors["wf@1/per_item@1/per_item@2/prep@1"] == "per_item"
    assert authors["wf@1/per_item@1/per_item@2"] == "wf"


async def test_delegating_to_a_nested_workflow_chains_output_for_up_to_the_root(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def last(node_input: str) -> str:
        return f"last({node_input})"

    inner = Workflow(name="inner", edges=[("START", last)])

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context, node_input: str) -> None:
        await ctx.run_node(inner, node_input, use_as_output=True)

    runner = Runner(Workflow(name="wf", edges=[("START", delegator)]), store=store)
    result = await runner.run("x")

    assert result.output == "last(x)"
    log = await read_log(runner, result.session_id)
    (event,) = log.output_events()
    assert event.node_path == "wf@1/delegator@1/inner@1/last@1"
    assert event.author == "inner"
    assert event.output_for == [
        "wf@1/delegator@1/inner@1/last@1",
        "wf@1/delegator@1/inner@1",
        "wf@1/delegator@1",
        "wf@1",
    ]
