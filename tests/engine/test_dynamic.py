"""Dynamic workflows: ``ctx.run_node`` node kinds, paths and run ids, sequences, loops, gather."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

from engine import (
    BaseNode,
    Context,
    Event,
    FunctionNode,
    InMemoryEventStore,
    RequestInput,
    Runner,
    Workflow,
    node,
)

from .builders import single


class Shout(BaseNode):
    """A hand-written node: upper-cases its input."""

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield str(node_input).upper()


async def test_run_node_accepts_function_node_plain_function_base_node_and_workflow(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def decorated(node_input: str) -> str:
        calls["decorated"] += 1
        return node_input + "-fn"

    def plain(node_input: str) -> str:
        calls["plain"] += 1
        return node_input + "-plain"

    def twice(node_input: str) -> str:
        calls["twice"] += 1
        return node_input * 2

    wrapped = FunctionNode(twice, name="wrapped")
    inner = Workflow(name="inner", edges=[("START", wrapped)])

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: str) -> list[str]:
        return [
            await ctx.run_node(decorated, node_input),
            await ctx.run_node(plain, node_input),
            await ctx.run_node(Shout(name="shout"), node_input),
            await ctx.run_node(inner, node_input),
        ]

    runner = Runner(single(orch), store=store)
    result = await runner.run("ab")

    assert result.status == "completed"
    assert result.output == ["ab-fn", "ab-plain", "AB", "abab"]
    assert calls == {"decorated": 1, "plain": 1, "twice": 1}
    log = await read_log(runner, result.session_id)
    assert log.started() == [
        "wf@1",
        "wf@1/orch@1",
        "wf@1/orch@1/decorated@1",
        "wf@1/orch@1/plain@1",
        "wf@1/orch@1/shout@1",
        "wf@1/orch@1/inner@1",
        "wf@1/orch@1/inner@1/wrapped@1",
    ]


async def test_run_node_allocates_the_run_id_when_called_not_when_awaited(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def child(node_input: str) -> str:
        return f"got {node_input}"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        first = ctx.run_node(child, "x")
        second = ctx.run_node(child, "y")
        later = await second  # awaited first, yet numbered second
        earlier = await first
        return [earlier, later]

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.output == ["got x", "got y"]
    outputs = (await read_log(runner, result.session_id)).outputs()
    assert outputs["wf@1/orch@1/child@1"] == "got x"
    assert outputs["wf@1/orch@1/child@2"] == "got y"


async def test_automatic_run_ids_count_per_parent_path_and_child_name(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def a(node_input: int) -> int:
        return node_input

    @node
    def b(node_input: int) -> int:
        return node_input

    @node(rerun_on_resume=True)
    async def sub(ctx: Context, node_input: int) -> int:
        return await ctx.run_node(a, node_input) + await ctx.run_node(a, node_input)

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[int]:
        return [
            await ctx.run_node(a, 1),
            await ctx.run_node(b, 2),
            await ctx.run_node(a, 3),
            await ctx.run_node(sub, 4),
            await ctx.run_node(b, 5),
            await ctx.run_node(sub, 6),
        ]

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.output == [1, 2, 3, 8, 5, 12]
    started = (await read_log(runner, result.session_id)).started()
    assert started == [
        "wf@1",
        "wf@1/orch@1",
        "wf@1/orch@1/a@1",
        "wf@1/orch@1/b@1",
        "wf@1/orch@1/a@2",
        "wf@1/orch@1/sub@1",
        "wf@1/orch@1/sub@1/a@1",
        "wf@1/orch@1/sub@1/a@2",
        "wf@1/orch@1/b@2",
        "wf@1/orch@1/sub@2",
        "wf@1/orch@1/sub@2/a@1",
        "wf@1/orch@1/sub@2/a@2",
    ]


async def test_custom_run_id_names_the_path_and_does_not_consume_automatic_numbers(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def process(node_input: str) -> str:
        calls[node_input] += 1
        return node_input.upper()

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        return [
            await ctx.run_node(process, "a7", run_id="order-A7"),
            await ctx.run_node(process, "auto1"),
            await ctx.run_node(process, "b8", run_id="8b"),
            await ctx.run_node(process, "auto2"),
        ]

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.output == ["A7", "AUTO1", "B8", "AUTO2"]
    outputs = (await read_log(runner, result.session_id)).outputs()
    assert outputs["wf@1/orch@1/process@order-A7"] == "A7"
    assert outputs["wf@1/orch@1/process@1"] == "AUTO1"
    assert outputs["wf@1/orch@1/process@8b"] == "B8"
    assert outputs["wf@1/orch@1/process@2"] == "AUTO2"
    assert calls == {"a7": 1, "auto1": 1, "b8": 1, "auto2": 1}


async def test_same_path_twice_in_one_turn_returns_the_recorded_result_without_running_again(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def child(node_input: str) -> str:
        calls["child"] += 1
        return f"ran with {node_input}"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        first = await ctx.run_node(child, "one", run_id="pinned")
        again = await ctx.run_node(child, "two", run_id="pinned")
        together = await asyncio.gather(
            ctx.run_node(child, "three", run_id="shared"), ctx.run_node(child, "four", run_id="shared")
        )
        return [first, again, *together]

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.output == ["ran with one", "ran with one", "ran with three", "ran with three"]
    assert calls["child"] == 2
    log = await read_log(runner, result.session_id)
    assert log.started().count("wf@1/orch@1/child@pinned") == 1
    assert log.started().count("wf@1/orch@1/child@shared") == 1


async def test_sequential_awaits_pass_each_output_to_the_next_child(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def generate(node_input: str) -> str:
        calls["generate"] += 1
        return f"{node_input}: Paris"

    @node
    def lookup(node_input: str) -> dict[str, str]:
        calls["lookup"] += 1
        return {"city": node_input.split(": ")[1], "time": "10:10"}

    @node
    def report(node_input: dict[str, str]) -> str:
        calls["report"] += 1
        return f"It is {node_input['time']} in {node_input['city']}"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: str) -> str:
        city = await ctx.run_node(generate, node_input)
        time = await ctx.run_node(lookup, city)
        return await ctx.run_node(report, time)

    runner = Runner(single(orch), store=store)
    result = await runner.run("pick")

    assert result.output == "It is 10:10 in Paris"
    assert calls == {"generate": 1, "lookup": 1, "report": 1}
    log = await read_log(runner, result.session_id)
    assert log.outputs() == {
        "wf@1/orch@1/generate@1": "pick: Paris",
        "wf@1/orch@1/lookup@1": {"city": "Paris", "time": "10:10"},
        "wf@1/orch@1/report@1": "It is 10:10 in Paris",
        "wf@1/orch@1": "It is 10:10 in Paris",
    }


async def test_while_loop_yields_state_between_children(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def check(node_input: int) -> int:
        calls["check"] += 1
        return max(0, 3 - node_input)  # findings left

    @node
    def fix(ctx: Context, node_input: int, findings: int) -> int:
        calls["fix"] += 1
        assert findings == 3 - node_input  # the state the loop yielded is visible here
        return node_input + 1

    @node(rerun_on_resume=True)
    async def loop(ctx: Context, node_input: int) -> AsyncGenerator[Any, None]:
        code = node_input
        findings = await ctx.run_node(check, code)
        while findings:
            yield Event(state={"code": code, "findings": findings})
            code = await ctx.run_node(fix, code)
            findings = await ctx.run_node(check, code)
        yield code

    runner = Runner(single(loop), store=store)
    result = await runner.run(0)

    assert result.status == "completed"
    assert result.output == 3
    assert calls == {"check": 4, "fix": 3}
    log = await read_log(runner, result.session_id)
    assert [(e.node_path, e.state) for e in log.of_kind("state")] == [
        ("wf@1/loop@1", {"code": 0, "findings": 3}),
        ("wf@1/loop@1", {"code": 1, "findings": 2}),
        ("wf@1/loop@1", {"code": 2, "findings": 1}),
    ]
    assert [p for p in log.started() if p.startswith("wf@1/loop@1/")] == [
        "wf@1/loop@1/check@1",
        "wf@1/loop@1/fix@1",
        "wf@1/loop@1/check@2",
        "wf@1/loop@1/fix@2",
        "wf@1/loop@1/check@3",
        "wf@1/loop@1/fix@3",
        "wf@1/loop@1/check@4",
    ]
    assert log.state() == {"code": 2, "findings": 1}


async def test_gather_over_many_children_returns_results_in_call_order(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    count = 40

    @node
    async def square(node_input: int) -> int:
        calls[f"square{node_input}"] += 1
        await asyncio.sleep((count - node_input) / 2000)  # later calls finish first
        return node_input * node_input

    @node(rerun_on_resume=True)
    async def fan(ctx: Context, node_input: int) -> list[int]:
        return list(await asyncio.gather(*(ctx.run_node(square, i) for i in range(node_input))))

    runner = Runner(single(fan), store=store)
    result = await runner.run(count)

    assert result.output == [i * i for i in range(count)]
    assert sum(calls.values()) == count and set(calls.values()) == {1}
    outputs = (await read_log(runner, result.session_id)).outputs()
    for i in range(count):
        assert outputs[f"wf@1/fan@1/square@{i + 1}"] == i * i


async def test_dynamic_nodes_run_dynamic_nodes_transitively(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def leaf(node_input: str) -> str:
        calls["leaf"] += 1
        return f"leaf({node_input})"

    @node(rerun_on_resume=True)
    async def inner(ctx: Context, node_input: str) -> str:
        calls["inner"] += 1
        return f"inner got: {await ctx.run_node(leaf, node_input)}"

    @node(rerun_on_resume=True)
    async def outer(ctx: Context, node_input: str) -> str:
        calls["outer"] += 1
        return await ctx.run_node(inner, "data")

    runner = Runner(single(outer), store=store)
    result = await runner.run("go")

    assert result.output == "inner got: leaf(data)"
    assert calls == {"outer": 1, "inner": 1, "leaf": 1}
    log = await read_log(runner, result.session_id)
    assert log.started()[-1] == "wf@1/outer@1/inner@1/leaf@1"
    assert log.outputs()["wf@1/outer@1/inner@1/leaf@1"] == "leaf(data)"
    assert log.outputs()["wf@1/outer@1/inner@1"] == "inner got: leaf(data)"


async def test_use_as_output_makes_the_child_output_the_terminal_callers_output(
    store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def worker(node_input: str) -> str:
        return f"worked {node_input}"

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context, node_input: str) -> None:
        await ctx.run_node(worker, node_input, use_as_output=True)

    runner = Runner(single(delegator), store=store)
    result = await runner.run("x")

    assert result.output == "worked x"
    log = await read_log(runner, result.session_id)
    (event,) = log.output_events()  # one event carries the output for child, caller and workflow
    assert event.node_path == "wf@1/delegator@1/worker@1"
    assert event.output_for == ["wf@1/delegator@1/worker@1", "wf@1/delegator@1", "wf@1"]


async def test_use_as_output_flows_downstream_from_a_non_terminal_caller(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def worker(node_input: str) -> str:
        return f"worked {node_input}"

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context, node_input: str) -> None:
        await ctx.run_node(worker, node_input, use_as_output=True)

    @node
    def downstream(node_input: Any) -> str:
        calls["downstream"] += 1
        return f"downstream saw {node_input!r}"

    runner = Runner(Workflow(name="wf", edges=[("START", delegator, downstream)]), store=store)
    result = await runner.run("x")

    assert result.output == "downstream saw 'worked x'"
    assert calls["downstream"] == 1
    log = await read_log(runner, result.session_id)
    (event,) = [e for e in log.output_events() if e.node_path == "wf@1/delegator@1/worker@1"]
    assert event.output_for == ["wf@1/delegator@1/worker@1", "wf@1/delegator@1"]


async def test_use_as_output_child_output_survives_a_resume(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def worker(node_input: str) -> str:
        calls["worker"] += 1
        return f"worked {node_input}"

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context, node_input: str) -> None:
        calls["delegator"] += 1
        await ctx.run_node(worker, node_input, use_as_output=True)

    @node
    async def approve(node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(message=f"approve {node_input}?", interrupt_id="ok")

    @node
    def downstream(node_input: Any) -> str:
        return f"approved={node_input}"

    wf = Workflow(name="wf", edges=[("START", delegator, approve, downstream)])
    runner = Runner(wf, store=store)
    first = await runner.run("x")
    assert first.status == "waiting"
    assert first.interrupts[0].message == "approve worked x?"

    result = await runner.resume(first.session_id, {"ok": "yes"})

    assert result.output == "approved=yes"
    assert calls == {"worker": 1, "delegator": 1}


async def test_custom_run_ids_keep_results_with_their_items_when_the_list_is_reordered_on_resume(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    batches = [["A", "B", "C"], ["C", "B", "A"]]

    @node(rerun_on_resume=True)
    async def handle(ctx: Context, node_input: str) -> AsyncGenerator[Any, None]:
        calls[node_input] += 1
        if node_input != "B":
            yield f"{node_input} handled"
        elif "check-B" in ctx.resume_inputs:
            yield f"B {ctx.resume_inputs['check-B']}"
        else:
            yield RequestInput(interrupt_id="check-B")

    @node(rerun_on_resume=True)
    async def handle_all(ctx: Context) -> list[str]:
        items = batches[min(calls["handle_all"], 1)]  # the source returns a new order on resume
        calls["handle_all"] += 1
        return list(
            await asyncio.gather(*(ctx.run_node(handle, item, run_id=f"item-{item}") for item in items))
        )

    runner = Runner(single(handle_all), store=store)
    first = await runner.run()
    result = await runner.resume(first.session_id, {"check-B": "checked"})

    assert result.output == ["C handled", "B checked", "A handled"]
    assert calls == {"handle_all": 2, "A": 1, "B": 2, "C": 1}


async def test_caller_output_after_use_as_output_is_suppressed(
    store: InMemoryEventStore, read_log: Any
) -> None:
    """As google-adk does: the delegate's output stands, the caller's own yield is dropped."""

    @node
    def worker(node_input: Any) -> str:
        return "from worker"

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context) -> AsyncGenerator[Any, None]:
        await ctx.run_node(worker, use_as_output=True)
        yield "from delegator"

    runner = Runner(single(delegator), store=store)
    result = await runner.run()

    assert result.status == "completed", result.error
    assert result.output == "from worker"
    assert [e.node_path for e in (await read_log(runner, result.session_id)).output_events()] == [
        "wf@1/delegator@1/worker@1"
    ]


async def test_state_written_by_a_child_is_visible_to_its_caller_and_later_children_also_after_resume(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def login(ctx: Context, node_input: str) -> str:
        calls["login"] += 1
        ctx.state["user"] = node_input
        return "token"

    @node
    async def ask(ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(message=f"hello {ctx.state['user']}", interrupt_id="q")

    @node
    def greet(user: str, node_input: Any) -> str:
        return f"{node_input}, {user}"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context, node_input: str) -> list[str]:
        token = await ctx.run_node(login, node_input)
        seen = ctx.state["user"]
        answer = await ctx.run_node(ask)
        return [token, seen, await ctx.run_node(greet, answer)]

    runner = Runner(single(orch), store=store)
    first = await runner.run("ada")
    assert first.interrupts[0].message == "hello ada"

    result = await runner.resume(first.session_id, {"q": "welcome back"})

    assert result.output == ["token", "ada", "welcome back, ada"]
    assert calls["login"] == 1
