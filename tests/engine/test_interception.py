"""Replay interception (seed 000, cases 1-7) and partial resume, through ``Runner`` and counters."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    Context,
    Event,
    FunctionNode,
    InMemoryEventStore,
    JoinNode,
    NodeInterruptedError,
    RequestInput,
    Runner,
    Workflow,
    node,
)

from .builders import asker, single

# -- case 1: same-turn dedup / waiting -----------------------------------------------------


async def test_case1_completed_path_met_again_in_the_same_turn_returns_its_output(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def child(node_input: int) -> int:
        calls["child"] += 1
        return node_input * 10

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[int]:
        calls["orch"] += 1
        return [await ctx.run_node(child, 1, run_id="k-1"), await ctx.run_node(child, 2, run_id="k-1")]

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.output == [10, 10]
    assert calls == {"orch": 1, "child": 1}
    assert (await read_log(runner, result.session_id)).started().count("wf@1/orch@1/child@k-1") == 1


async def test_case1_waiting_path_met_again_in_the_same_turn_reports_its_interrupts_without_running(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    ask = asker(calls, "ask", "q")
    seen: list[list[str]] = []

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        calls["orch"] += 1
        for _ in range(2):
            try:
                return await ctx.run_node(ask, run_id="only")
            except NodeInterruptedError as waiting:
                seen.append(list(waiting.interrupt_ids))
        raise NodeInterruptedError(seen[-1], ctx.node_path)

    runner = Runner(single(orch), store=store)
    first = await runner.run()

    assert first.status == "waiting"
    assert [i.id for i in first.interrupts] == ["q"]
    assert seen == [["q"], ["q"]]
    assert calls == {"orch": 1, "ask": 1}
    log = await read_log(runner, first.session_id)
    assert len(log.of_kind("interrupt")) == 1

    result = await runner.resume(first.session_id, {"q": "fine"})
    assert result.output == "fine"
    assert calls == {"orch": 2, "ask": 1}


async def test_case1_workflow_child_met_again_in_the_same_turn_is_not_run_again(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def step(node_input: str) -> str:
        calls["step"] += 1
        return node_input.upper()

    inner = Workflow(name="inner", edges=[("START", step)])

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        return [await ctx.run_node(inner, "a", run_id="w-a"), await ctx.run_node(inner, "b", run_id="w-a")]

    result = await Runner(single(orch), store=store).run()

    assert result.output == ["A", "A"]
    assert calls["step"] == 1


async def test_case1_waiting_child_shared_by_two_gathered_calls_asks_once(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        calls["orch"] += 1
        return list(await asyncio.gather(ctx.run_node(ask, run_id="one"), ctx.run_node(ask, run_id="one")))

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    assert [i.id for i in first.interrupts] == ["q"]
    assert len((await read_log(runner, first.session_id)).of_kind("interrupt")) == 1

    result = await runner.resume(first.session_id, {"q": "both"})
    assert result.output == ["both", "both"]
    assert calls == {"orch": 2, "ask": 1}


# -- case 2: a nested Workflow always re-enters ---------------------------------------------


async def test_case2_nested_workflow_run_by_run_node_re_enters_and_replays_its_own_children(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any, turns: Callable[..., Any]
) -> None:
    @node
    def step(node_input: str) -> str:
        calls["step"] += 1
        return f"step({node_input})"

    inner = Workflow(name="inner", edges=[("START", step)])
    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: str) -> list[Any]:
        calls["orch"] += 1
        return [await ctx.run_node(inner, node_input), await ctx.run_node(ask)]

    runner = Runner(single(orch), store=store)
    first = await runner.run("x")
    result = await runner.resume(first.session_id, {"q": "ok"})

    assert result.output == ["step(x)", "ok"]
    assert calls == {"orch": 2, "step": 1, "ask": 1}
    second_turn = turns(await read_log(runner, first.session_id))[1]
    assert "wf@1/orch@1/inner@1" in second_turn.started()  # re-entered ...
    assert "wf@1/orch@1/inner@1/step@1" not in second_turn.started()  # ... and replayed its child


async def test_case2_nested_workflow_in_a_graph_re_enters_on_resume(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any, turns: Callable[..., Any]
) -> None:
    @node
    def step(node_input: str) -> str:
        calls["step"] += 1
        return f"step({node_input})"

    inner = Workflow(name="inner", edges=[("START", step)])
    ask = asker(calls, "ask", "q")

    @node
    def finish(node_input: Any) -> str:
        calls["finish"] += 1
        return f"finished with {node_input}"

    runner = Runner(Workflow(name="wf", edges=[("START", inner, ask, finish)]), store=store)
    first = await runner.run("x")
    result = await runner.resume(first.session_id, {"q": "ok"})

    assert result.output == "finished with ok"
    assert calls == {"step": 1, "ask": 1, "finish": 1}
    second_turn = turns(await read_log(runner, first.session_id))[1]
    assert "wf@1/inner@1" in second_turn.started()
    assert "wf@1/inner@1/step@1" not in second_turn.started()


# -- case 3: waiting / partial resume --------------------------------------------------------


async def test_case3_rerun_on_resume_child_with_one_of_two_answers_runs_again_and_re_asks(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    seen: list[dict[str, Any]] = []

    @node(rerun_on_resume=True)
    async def form(ctx: Context) -> AsyncGenerator[Any, None]:
        calls["form"] += 1
        seen.append(dict(ctx.resume_inputs))
        missing = [key for key in ("name", "age") if key not in ctx.resume_inputs]
        for key in missing:
            yield RequestInput(message=key, interrupt_id=key)
        if not missing:
            yield f"{ctx.resume_inputs['name']} is {ctx.resume_inputs['age']}"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        return await ctx.run_node(form)

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    assert sorted(i.id for i in first.interrupts) == ["age", "name"]

    partial = await runner.resume(first.session_id, {"name": "Ada"})
    assert partial.status == "waiting"
    assert [i.id for i in partial.interrupts] == ["age"]
    assert calls == {"orch": 2, "form": 2}

    result = await runner.resume(first.session_id, {"age": 36})
    assert result.output == "Ada is 36"
    assert calls == {"orch": 3, "form": 3}
    assert seen == [{}, {"name": "Ada"}, {"name": "Ada", "age": 36}]


async def test_case3_leaf_without_rerun_on_resume_keeps_waiting_until_every_answer_is_in(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    async def form(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["form"] += 1
        yield RequestInput(message="name", interrupt_id="name")
        yield RequestInput(message="age", interrupt_id="age")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        calls["orch"] += 1
        return await ctx.run_node(form)

    runner = Runner(single(orch), store=store)
    first = await runner.run()

    partial = await runner.resume(first.session_id, {"age": 36})
    assert partial.status == "waiting"
    assert [i.id for i in partial.interrupts] == ["name"]
    assert calls["form"] == 1

    result = await runner.resume(first.session_id, {"name": "Ada"})
    assert result.output == {"name": "Ada", "age": 36}
    assert calls["form"] == 1


async def test_case3_resume_does_not_re_run_an_orchestrator_in_an_unrelated_branch(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    ask_a = asker(calls, "ask_a", "a")
    ask_b = asker(calls, "ask_b", "b")

    @node(rerun_on_resume=True)
    async def left(ctx: Context) -> Any:
        calls["left"] += 1
        return await ctx.run_node(ask_a)

    @node(rerun_on_resume=True)
    async def right(ctx: Context) -> Any:
        calls["right"] += 1
        return await ctx.run_node(ask_b)

    join = JoinNode(name="join")
    wf = Workflow(name="wf", edges=[("START", (left, right)), ((left, right), join)])
    runner = Runner(wf, store=store)
    first = await runner.run()
    assert sorted(i.id for i in first.interrupts) == ["a", "b"]

    partial = await runner.resume(first.session_id, {"a": 1})
    assert [i.id for i in partial.interrupts] == ["b"]
    assert calls == {"left": 2, "right": 1, "ask_a": 1, "ask_b": 1}

    result = await runner.resume(first.session_id, {"b": 2})
    assert result.output == {"left": 1, "right": 2}
    assert calls == {"left": 2, "right": 2, "ask_a": 1, "ask_b": 1}


async def test_case3_child_that_finishes_without_every_answer_withdraws_its_other_questions(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node(rerun_on_resume=True)
    async def either(ctx: Context) -> AsyncGenerator[Any, None]:
        calls["either"] += 1
        if ctx.resume_inputs:
            yield f"first answer: {next(iter(ctx.resume_inputs.values()))}"
            return
        yield RequestInput(interrupt_id="ann")
        yield RequestInput(interrupt_id="bob")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        return await ctx.run_node(either)

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    assert sorted(i.id for i in first.interrupts) == ["ann", "bob"]

    result = await runner.resume(first.session_id, {"bob": "go"})

    assert result.status == "completed"
    assert result.output == "first answer: go"
    assert (await runner.result(first.session_id)).interrupts == []
    assert calls["either"] == 2


# -- case 4: prior failure ---------------------------------------------------------------------


async def test_case4_child_that_failed_in_an_earlier_turn_runs_again(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def steady(node_input: int) -> int:
        calls["steady"] += 1
        return node_input

    @node
    def flaky(node_input: int) -> int:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise ConnectionError("upstream down")
        return node_input * 2

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[int]:
        calls["orch"] += 1
        return [await ctx.run_node(steady, 1), await ctx.run_node(flaky, 2)]

    runner = Runner(single(orch), store=store)
    failed = await runner.run()
    assert failed.status == "failed"
    assert failed.error_type == "ConnectionError"

    result = await runner.resume(failed.session_id, {})
    assert result.output == [1, 4]
    assert calls == {"orch": 2, "steady": 1, "flaky": 2}


# -- case 5: fast-forward ---------------------------------------------------------------------


class Quote(BaseModel):
    item: str
    price: int


async def test_case5_completed_children_fast_forward_with_their_recorded_output(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def quote(node_input: str) -> Quote:
        calls["quote"] += 1
        return Quote(item=node_input, price=7)

    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: str) -> str:
        calls["orch"] += 1
        offer = await ctx.run_node(quote, node_input)
        assert isinstance(offer, Quote)  # a model instance, also after replay
        answer = await ctx.run_node(ask)
        return f"{offer.item} at {offer.price}: {answer}"

    runner = Runner(single(orch), store=store)
    first = await runner.run("tea")
    result = await runner.resume(first.session_id, {"q": "deal"})

    assert result.output == "tea at 7: deal"
    assert calls == {"orch": 2, "quote": 1, "ask": 1}


async def test_case5_static_node_fast_forwards_with_its_recorded_route(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def classify(node_input: int) -> Any:
        calls["classify"] += 1
        return Event(output=node_input, route="big" if node_input > 10 else "small")

    ask = asker(calls, "ask", "q")

    @node
    def small(node_input: Any) -> str:
        calls["small"] += 1
        return "small path"

    wf = Workflow(name="wf", edges=[("START", classify), (classify, {"big": ask, "small": small})])
    runner = Runner(wf, store=store)
    first = await runner.run(50)
    result = await runner.resume(first.session_id, {"q": "big path"})

    assert result.output == "big path"
    assert calls == {"classify": 1, "ask": 1}


# -- case 6: all interrupts answered, no output yet --------------------------------------------


async def test_case6_leaf_without_rerun_on_resume_outputs_its_single_answer_without_running(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        return f"answer was {await ctx.run_node(ask)}"

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"q": {"ok": True}})

    assert result.output == "answer was {'ok': True}"
    assert calls == {"orch": 2, "ask": 1}
    log = await read_log(runner, first.session_id)
    # As in ADK, the answered leaf writes no output event of its own: its marker carries none.
    assert "wf@1/orch@1/ask@1" not in log.outputs()
    assert [e.output for e in log.of_kind("completed") if e.node_path == "wf@1/orch@1/ask@1"] == [None]


async def test_case6_leaf_without_rerun_on_resume_outputs_a_dict_of_several_answers(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    async def form(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["form"] += 1
        yield RequestInput(interrupt_id="x")
        yield RequestInput(interrupt_id="y")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        return await ctx.run_node(form)

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"x": 1, "y": 2})

    assert result.output == {"x": 1, "y": 2}
    assert calls["form"] == 1


async def test_case6_rerun_on_resume_child_runs_again_with_the_answers(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node(rerun_on_resume=True)
    async def approve(ctx: Context, node_input: str) -> AsyncGenerator[Any, None]:
        calls["approve"] += 1
        if "q" in ctx.resume_inputs:
            yield f"{node_input}: {ctx.resume_inputs['q']}"
        else:
            yield RequestInput(message=f"approve {node_input}?", interrupt_id="q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        return await ctx.run_node(approve, "deploy")

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"q": "yes"})

    assert result.output == "deploy: yes"
    assert calls == {"orch": 2, "approve": 2}


# -- case 7: nothing recorded but a start ------------------------------------------------------


async def test_case7_static_node_that_completed_with_none_fast_forwards(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def side_effect(node_input: Any) -> None:
        calls["side_effect"] += 1

    ask = asker(calls, "ask", "q")
    runner = Runner(Workflow(name="wf", edges=[("START", side_effect, ask)]), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"q": "done"})

    assert result.output == "done"
    assert calls == {"side_effect": 1, "ask": 1}


async def test_case7_dynamic_child_that_completed_with_none_is_not_run_again(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    """The log records completion explicitly, so only failed or interrupted children re-run."""

    @node
    def side_effect(node_input: Any) -> None:
        calls["side_effect"] += 1

    ask = asker(calls, "ask", "q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        calls["orch"] += 1
        await ctx.run_node(side_effect)
        return await ctx.run_node(ask)

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"q": "done"})

    assert result.output == "done"
    assert calls == {"orch": 2, "side_effect": 1, "ask": 1}


@pytest.mark.parametrize("kind", ["plain function", "coroutine"])
async def test_case7_child_in_flight_when_the_process_stopped_runs_again(
    calls: Counter[str], store: InMemoryEventStore, kind: str
) -> None:
    @node
    def first_step(node_input: int) -> int:
        calls["first_step"] += 1
        return node_input + 1

    def times_ten(node_input: int) -> int:
        calls["second_step"] += 1
        return node_input * 10

    async def times_ten_async(node_input: int) -> int:
        return times_ten(node_input)

    second_step = FunctionNode(times_ten if kind == "plain function" else times_ten_async, name="second_step")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: int) -> int:
        calls["orch"] += 1
        return await ctx.run_node(second_step, await ctx.run_node(first_step, node_input))

    wf = single(orch)
    done = await Runner(wf, store=store).run(1)
    assert done.output == 20

    # Keep the log as a crash mid-node would leave it: a coroutine's execution up to its
    # "started"; a plain function's (one event when nobody watches) without any of it.
    saved = store.dump(done.session_id)
    events = saved["events"]
    path = "wf@1/orch@1/second_step@1"
    began = next(i for i, e in enumerate(events) if e["node_path"] == path)
    if kind == "coroutine":
        assert events[began]["kind"] == "started"
        began += 1
    else:
        assert events[began]["kind"] == "completed"
    crashed = InMemoryEventStore.load({**saved, "events": events[:began], "status": "running"})
    calls.clear()

    result = await Runner(wf, store=crashed).advance(done.session_id)

    assert result.output == 20
    assert calls == {"orch": 1, "second_step": 1}


async def test_a_turn_stopped_between_the_workflows_completion_and_its_status_completes_it_once(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def only_step(node_input: int) -> int:
        calls["only_step"] += 1
        return node_input * 3

    wf = single(only_step)
    done = await Runner(wf, store=store).run(2)
    # Keep the log up to the workflow's own "completed" event, as a worker killed before
    # writing the final status would leave it.
    saved = store.dump(done.session_id)
    events = saved["events"]
    assert [e["kind"] for e in events[-2:]] == ["completed", "status"]
    stopped = InMemoryEventStore.load({**saved, "events": events[:-1], "status": "running"})
    calls.clear()

    result = await Runner(wf, store=stopped).advance(done.session_id)

    assert (result.status, result.output) == ("completed", 6)
    assert calls == {}
    kept = await stopped.list_events(done.session_id)
    assert [(e.kind, e.node_path) for e in kept[len(events) - 1 :]] == [("status", "wf@1")]
    assert sum(e.kind == "completed" and e.node_path == "wf@1" for e in kept) == 1
    assert (await stopped.get_session(done.session_id)).status == "completed"
    assert (await Runner(wf, store=stopped).result(done.session_id)).output == 6


# -- partial resume of parallel children -----------------------------------------------------


def five_workers(calls: Counter[str], rerun_on_resume: bool) -> Any:
    @node(name="worker", rerun_on_resume=rerun_on_resume)
    async def worker(ctx: Context, node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"worker{node_input}"] += 1
        await asyncio.sleep(0.001 * (5 - node_input))
        if node_input % 2 == 0:
            yield node_input * 100
        elif f"w{node_input}" in ctx.resume_inputs:
            yield ctx.resume_inputs[f"w{node_input}"]
        else:
            yield RequestInput(message=f"item {node_input}", interrupt_id=f"w{node_input}")

    @node(rerun_on_resume=True)
    async def supervisor(ctx: Context, node_input: list[int]) -> list[Any]:
        calls["supervisor"] += 1
        return list(await asyncio.gather(*(ctx.run_node(worker, item) for item in node_input)))

    return supervisor


async def test_partial_resume_of_five_parallel_children_re_executes_only_the_answered_one(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    runner = Runner(single(five_workers(calls, rerun_on_resume=True)), store=any_store)
    first = await runner.run([1, 2, 3, 4, 5])

    assert first.status == "waiting"
    assert sorted(i.id for i in first.interrupts) == ["w1", "w3", "w5"]
    base = {f"worker{i}": 1 for i in range(1, 6)}
    assert calls == {"supervisor": 1, **base}

    second = await runner.resume(first.session_id, {"w3": "three"})
    assert sorted(i.id for i in second.interrupts) == ["w1", "w5"]
    assert calls == {"supervisor": 2, **base, "worker3": 2}

    third = await runner.resume(first.session_id, {"w1": "one"})
    assert [i.id for i in third.interrupts] == ["w5"]
    assert calls == {"supervisor": 3, **base, "worker3": 2, "worker1": 2}

    result = await runner.resume(first.session_id, {"w5": "five"})
    assert result.output == ["one", 200, "three", 400, "five"]
    assert calls == {"supervisor": 4, **base, "worker3": 2, "worker1": 2, "worker5": 2}


async def test_partial_resume_of_parallel_handoff_children_runs_none_of_them_again(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    runner = Runner(single(five_workers(calls, rerun_on_resume=False)), store=store)
    first = await runner.run([1, 2, 3, 4, 5])
    for answer in ("w5", "w1", "w3"):
        last = await runner.resume(first.session_id, {answer: answer.upper()})

    assert last.output == ["W1", 200, "W3", 400, "W5"]
    assert calls == {"supervisor": 4, **{f"worker{i}": 1 for i in range(1, 6)}}


async def test_partial_resume_re_runs_only_the_orchestrators_above_the_answered_child(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    async def ask(node_input: str) -> AsyncGenerator[Any, None]:
        calls[f"ask-{node_input}"] += 1
        yield RequestInput(interrupt_id=node_input)

    @node(rerun_on_resume=True)
    async def team(ctx: Context, node_input: str) -> list[Any]:
        calls[f"team-{node_input}"] += 1
        return list(
            await asyncio.gather(ctx.run_node(ask, f"{node_input}1"), ctx.run_node(ask, f"{node_input}2"))
        )

    @node(rerun_on_resume=True)
    async def top(ctx: Context) -> list[Any]:
        calls["top"] += 1
        return list(await asyncio.gather(ctx.run_node(team, "a"), ctx.run_node(team, "b")))

    runner = Runner(single(top), store=store)
    first = await runner.run()
    assert sorted(i.id for i in first.interrupts) == ["a1", "a2", "b1", "b2"]
    asks = {f"ask-{t}{n}": 1 for t in "ab" for n in (1, 2)}
    assert calls == {"top": 1, "team-a": 1, "team-b": 1, **asks}

    await runner.resume(first.session_id, {"b2": "B2"})
    assert calls == {"top": 2, "team-a": 1, "team-b": 2, **asks}

    await runner.resume(first.session_id, {"a1": "A1", "a2": "A2"})
    assert calls == {"top": 3, "team-a": 2, "team-b": 2, **asks}

    result = await runner.resume(first.session_id, {"b1": "B1"})
    assert result.output == [["A1", "A2"], ["B1", "B2"]]
    assert calls == {"top": 4, "team-a": 2, "team-b": 3, **asks}


async def test_answers_recorded_separately_then_one_advance_re_runs_each_node_once(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    runner = Runner(single(five_workers(calls, rerun_on_resume=True)), store=store)
    first = await runner.run([1, 2, 3, 4, 5])

    await runner.answer(first.session_id, {"w1": "one"}, actor="ann")
    await runner.answer(first.session_id, {"w5": "five"}, actor="bob")
    assert calls["supervisor"] == 1  # answering alone executes nothing
    partial = await runner.advance(first.session_id)

    assert [i.id for i in partial.interrupts] == ["w3"]
    base = {f"worker{i}": 1 for i in range(1, 6)}
    assert calls == {"supervisor": 2, **base, "worker1": 2, "worker5": 2}


async def test_answer_deep_in_a_chain_of_orchestrators_re_runs_each_level_once(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    ask = asker(calls, "ask", "deep")

    @node(name="level", rerun_on_resume=True)
    async def level(ctx: Context, node_input: int) -> Any:
        calls[f"level{node_input}"] += 1
        if node_input == 10:
            return await ctx.run_node(ask)
        return await ctx.run_node(level, node_input + 1)

    runner = Runner(single(level), store=store)
    first = await runner.run(1)
    assert first.interrupts[0].node_path == "wf@1" + "/level@1" * 10 + "/ask@1"

    result = await runner.resume(first.session_id, {"deep": "bottom"})

    assert result.output == "bottom"
    assert calls == {"ask": 1, **{f"level{n}": 2 for n in range(1, 11)}}


async def test_case1_path_met_twice_in_a_resumed_turn_replays_or_re_runs_it_once(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def fetch(node_input: Any) -> str:
        calls["fetch"] += 1
        return "fetched"

    @node(rerun_on_resume=True)
    async def approve(ctx: Context) -> AsyncGenerator[Any, None]:
        calls["approve"] += 1
        if "ok" in ctx.resume_inputs:
            yield f"approved {ctx.resume_inputs['ok']}"
        else:
            yield RequestInput(interrupt_id="ok")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        calls["orch"] += 1
        fetched = await asyncio.gather(ctx.run_node(fetch, run_id="f"), ctx.run_node(fetch, run_id="f"))
        approved = await asyncio.gather(ctx.run_node(approve, run_id="a"), ctx.run_node(approve, run_id="a"))
        return [*fetched, *approved]

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    assert calls == {"orch": 1, "fetch": 1, "approve": 1}

    result = await runner.resume(first.session_id, {"ok": "yes"})

    assert result.output == ["fetched", "fetched", "approved yes", "approved yes"]
    assert calls == {"orch": 2, "fetch": 1, "approve": 2}


def slow_asking_workers(calls: Counter[str]) -> Any:
    """A supervisor gathering ``rerun_on_resume`` workers that each take a moment, then ask ``q<n>``."""

    @node(rerun_on_resume=True)
    async def worker(ctx: Context, node_input: int) -> AsyncGenerator[Any, None]:
        calls[f"worker{node_input}"] += 1
        await asyncio.sleep(0.01)
        if f"q{node_input}" in ctx.resume_inputs:
            yield ctx.resume_inputs[f"q{node_input}"]
        else:
            yield RequestInput(interrupt_id=f"q{node_input}")

    @node(rerun_on_resume=True)
    async def supervisor(ctx: Context, node_input: list[int]) -> list[Any]:
        return list(await asyncio.gather(*(ctx.run_node(worker, item) for item in node_input)))

    return supervisor


async def test_answer_given_while_a_resume_runs_is_taken_up_without_running_anything_twice(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    runner = Runner(single(slow_asking_workers(calls)), store=any_store)
    first = await runner.run([1, 2, 3])
    resuming = asyncio.create_task(runner.resume(first.session_id, {"q1": "A"}))
    while calls["worker1"] < 2:  # worker 1 is running again
        await asyncio.sleep(0.001)

    await runner.answer(first.session_id, {"q2": "B"})
    second = await resuming

    assert [i.id for i in second.interrupts] == ["q3"]
    assert calls == {"worker1": 2, "worker2": 2, "worker3": 1}
    result = await runner.resume(first.session_id, {"q3": "C"})
    assert result.output == ["A", "B", "C"]
    assert calls == {"worker1": 2, "worker2": 2, "worker3": 2}


async def test_two_concurrent_resumes_of_one_session_run_each_answered_child_once(
    calls: Counter[str], any_store: InMemoryEventStore
) -> None:
    runner = Runner(single(slow_asking_workers(calls)), store=any_store)
    first = await runner.run([1, 2, 3])

    ann, bob = await asyncio.gather(
        runner.resume(first.session_id, {"q1": "A"}, actor="ann"),
        runner.resume(first.session_id, {"q2": "B"}, actor="bob"),
    )

    assert calls == {"worker1": 2, "worker2": 2, "worker3": 1}
    assert [i.id for i in (await runner.result(first.session_id)).interrupts] == ["q3"]
    assert {ann.status, bob.status} == {"waiting"}
