"""The scenarios, written once against the names google-adk and ``engine`` share.

Each scenario is a function of ``m`` (a namespace holding ``Workflow``, ``node``, ``Event``,
``RequestInput``... from one side) and ``calls`` (a counter the nodes bump, so both sides
report how often each node ran). It returns the workflow, its input (a string: ADK hands a
node annotated ``str`` the user's text) and the answers of each later turn. Interrupt ids are
fixed so the answers can be written down in advance. The comments name the issue 25 item a
scenario covers, or the ADK pattern.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel


@dataclass
class Scenario:
    workflow: Any
    input: Any = "go"
    answers: list[dict[str, Any]] = field(default_factory=list)
    # The node paths whose outputs are compared (None: all). Agents record their model and
    # tool steps differently on each side, so an agent scenario names the paths it compares.
    observe: tuple[str, ...] | None = None


# A scripted model's turn: ("text", words) or ("call", tool, arguments). In words, "{last}" is
# the newest text the model was sent: the user's message, or what a tool returned.
Turn = tuple[Any, ...]


Build = Callable[[Any, Counter[str]], Scenario]
SCENARIOS: dict[str, Build] = {}


def scenario(build: Build) -> Build:
    SCENARIOS[build.__name__] = build
    return build


def step(m: Any, calls: Counter[str], name: str, suffix: str | None = None, **options: Any) -> Any:
    """A node that appends ``suffix`` (its name by default) to its input, as a string.

    Its input is annotated ``str`` right after START (ADK hands such a node the user's text,
    and any other node the user's ``Content``), ``Any`` elsewhere.
    """

    def run(node_input: Any) -> str:
        calls[name] += 1
        return f"{node_input}>{suffix or name}"

    def first(node_input: str) -> str:
        return run(node_input)

    first.__name__ = run.__name__
    if options.pop("first", False):
        return m.FunctionNode(func=first, name=name, **options)

    return m.FunctionNode(func=run, name=name, **options)


def in_wf(m: Any, edges: list[Any], **options: Any) -> Scenario:
    """The scenario of the workflow ``wf`` on ``edges``; ``options`` are the scenario's own
    (``input``, ``answers``, ``observe``)."""
    return Scenario(m.Workflow(name="wf", edges=edges), **options)


# -- common ADK patterns -----------------------------------------------------------------


@scenario
def sequence(m: Any, calls: Counter[str]) -> Scenario:
    a, b, c = step(m, calls, "a", first=True), step(m, calls, "b"), step(m, calls, "c")
    return in_wf(m, [(m.START, a, b, c)])


@scenario
def routing_map(m: Any, calls: Counter[str]) -> Scenario:
    def classify(node_input: str) -> Any:
        calls["classify"] += 1
        return m.Event(output=node_input, route="big" if len(node_input) > 3 else "small")

    big, small = step(m, calls, "big"), step(m, calls, "small")
    edges = [(m.START, m.FunctionNode(func=classify), {"big": big, "small": small})]
    return in_wf(m, edges, input="large")


@scenario
def default_route(m: Any, calls: Counter[str]) -> Scenario:
    def classify(node_input: str) -> Any:
        calls["classify"] += 1
        return m.Event(output=node_input, route="other")

    known, fallback = step(m, calls, "known"), step(m, calls, "fallback")
    edges = [(m.START, m.FunctionNode(func=classify), {"known": known, m.DEFAULT_ROUTE: fallback})]
    return in_wf(m, edges)


@scenario
def route_matching_no_edge(m: Any, calls: Counter[str]) -> Scenario:
    def pick(node_input: str) -> Any:
        calls["pick"] += 1
        return m.Event(output=node_input, route="nowhere")

    def other(node_input: str) -> str:
        calls["other"] += 1
        return "other done"

    edges = [
        (m.START, m.FunctionNode(func=pick), {"x": step(m, calls, "x")}),
        (m.START, m.FunctionNode(func=other)),
    ]
    return in_wf(m, edges)


@scenario
def fan_out_join(m: Any, calls: Counter[str]) -> Scenario:
    def word_count(node_input: str) -> int:
        calls["word_count"] += 1
        return len(node_input.split())

    def shout(node_input: str) -> str:
        calls["shout"] += 1
        return node_input.upper()

    def report(node_input: dict[str, Any]) -> str:
        calls["report"] += 1
        return f"{node_input['shout']} ({node_input['word_count']} words)"

    join = m.JoinNode(name="join")
    fan = (m.FunctionNode(func=word_count), m.FunctionNode(func=shout))
    edges = [(m.START, fan, join, m.FunctionNode(func=report))]
    return in_wf(m, edges, input="the quick brown fox")


@scenario
def route_loop(m: Any, calls: Counter[str]) -> Scenario:
    def a(ctx: Any, node_input: Any) -> Any:
        calls["a"] += 1
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        return m.Event(output=ctx.state["n"])

    def b(node_input: int) -> Any:
        calls["b"] += 1
        return m.Event(output=node_input, route="again" if node_input < 3 else "done")

    node_a, node_b, c = m.FunctionNode(func=a), m.FunctionNode(func=b), step(m, calls, "c")
    edges = [(m.START, node_a, node_b), (node_b, {"again": node_a, "done": c})]
    return in_wf(m, edges, input="x")


@scenario
def state_writes(m: Any, calls: Counter[str]) -> Scenario:
    async def first(ctx: Any, node_input: str) -> Any:
        calls["first"] += 1
        yield m.Event(state={"seen": node_input})
        ctx.state["count"] = 1
        yield m.Event(output="one")

    def second(ctx: Any, node_input: str) -> str:
        calls["second"] += 1
        ctx.state["count"] = ctx.state["count"] + 1
        return f"{node_input}:{ctx.state['seen']}"

    edges = [(m.START, m.FunctionNode(func=first), m.FunctionNode(func=second))]
    return in_wf(m, edges)


@scenario
def ctx_output_and_route(m: Any, calls: Counter[str]) -> Scenario:
    class Decide(m.BaseNode):  # type: ignore[misc, name-defined]
        async def _run_impl(self, *, ctx: Any, node_input: Any) -> Any:
            calls["decide"] += 1
            ctx.output = "decided"
            ctx.route = "yes"
            return
            yield

    yes, no = step(m, calls, "yes"), step(m, calls, "no")
    edges = [(m.START, Decide(name="decide"), {"yes": yes, "no": no})]
    return in_wf(m, edges)


@scenario
def nested_workflow(m: Any, calls: Counter[str]) -> Scenario:
    inner = m.Workflow(name="inner", edges=[(m.START, step(m, calls, "x"), step(m, calls, "y"))])
    edges = [(m.START, step(m, calls, "before", first=True), inner, step(m, calls, "after"))]
    return in_wf(m, edges)


@scenario
def parallel_worker(m: Any, calls: Counter[str]) -> Scenario:
    def split(node_input: str) -> list[str]:
        calls["split"] += 1
        return node_input.split()

    async def upper(node_input: str) -> str:
        calls["upper"] += 1
        return node_input.upper()

    def total(node_input: list[str]) -> str:
        calls["total"] += 1
        return "-".join(node_input)

    workers = m.node(upper, parallel_worker=True)
    edges = [(m.START, m.FunctionNode(func=split), workers, m.FunctionNode(func=total))]
    return in_wf(m, edges, input="a b c")


@scenario
def dynamic_sequence(m: Any, calls: Counter[str]) -> Scenario:
    child = step(m, calls, "child", "c")

    async def orchestrate(ctx: Any, node_input: str) -> str:
        calls["orchestrate"] += 1
        value = node_input
        for _ in range(3):
            value = await ctx.run_node(child, value)
        return value

    edges = [(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    return in_wf(m, edges)


@scenario
def dynamic_gather(m: Any, calls: Counter[str]) -> Scenario:
    async def square(node_input: int) -> int:
        calls["square"] += 1
        await asyncio.sleep(0.01 * (3 - node_input))
        return node_input * node_input

    child = m.FunctionNode(func=square)

    async def orchestrate(ctx: Any, node_input: str) -> list[int]:
        calls["orchestrate"] += 1
        return list(await asyncio.gather(*(ctx.run_node(child, i) for i in range(3))))

    edges = [(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    return in_wf(m, edges)


@scenario
def use_as_output(m: Any, calls: Counter[str]) -> Scenario:
    child = step(m, calls, "child", "delegated")

    async def delegate(ctx: Any, node_input: str) -> Any:
        calls["delegate"] += 1
        await ctx.run_node(child, node_input, use_as_output=True)

    edges = [(m.START, m.FunctionNode(func=delegate, rerun_on_resume=True))]
    return in_wf(m, edges)


@scenario
def custom_run_id_reused(m: Any, calls: Counter[str]) -> Scenario:
    child = step(m, calls, "process")

    async def orchestrate(ctx: Any, node_input: str) -> list[str]:
        calls["orchestrate"] += 1
        first = await ctx.run_node(child, "one", run_id="order-A7")
        again = await ctx.run_node(child, "two", run_id="order-A7")
        return [first, again]

    edges = [(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    return in_wf(m, edges)


@scenario
def max_concurrency(m: Any, calls: Counter[str]) -> Scenario:
    running: list[str] = []

    def worker(name: str) -> Any:
        async def run(node_input: str) -> str:
            running.append(name)
            calls["peak"] = max(calls["peak"], len(running))
            await asyncio.sleep(0.02)
            running.remove(name)
            return name

        return m.FunctionNode(func=run, name=name)

    join = m.JoinNode(name="join")
    fan = tuple(worker(f"w{i}") for i in range(4))
    return Scenario(m.Workflow(name="wf", edges=[(m.START, fan, join)], max_concurrency=2))


@scenario
def dynamic_interrupt_in_nested_workflow(m: Any, calls: Counter[str]) -> Scenario:
    async def approve(node_input: str) -> Any:
        calls["approve"] += 1
        yield m.RequestInput(interrupt_id="ok", message="?")

    child = m.FunctionNode(func=approve)

    async def orchestrate(ctx: Any, node_input: str) -> str:
        calls["orchestrate"] += 1
        return f"inner got {await ctx.run_node(child, node_input)}"

    inner = m.Workflow(
        name="inner", edges=[(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    )
    edges = [(m.START, inner, step(m, calls, "after"))]
    return in_wf(m, edges, answers=[{"ok": "yes"}])


@scenario
def interrupt_rerun(m: Any, calls: Counter[str]) -> Scenario:
    async def review(ctx: Any, node_input: str) -> Any:
        calls["review"] += 1
        if "ok" in ctx.resume_inputs:
            yield f"{node_input}: {ctx.resume_inputs['ok']}"
            return
        yield m.RequestInput(interrupt_id="ok", message="Approve?")

    edges = [(m.START, m.FunctionNode(func=review, rerun_on_resume=True), step(m, calls, "after"))]
    return in_wf(m, edges, answers=[{"ok": "yes"}])


@scenario
def interrupt_fast_forward(m: Any, calls: Counter[str]) -> Scenario:
    async def ask(node_input: str) -> Any:
        calls["ask"] += 1
        yield m.RequestInput(interrupt_id="q", message="Name?")

    edges = [
        (m.START, step(m, calls, "before", first=True), m.FunctionNode(func=ask), step(m, calls, "after"))
    ]
    return in_wf(m, edges, answers=[{"q": "ann"}])


@scenario
def dynamic_interrupt(m: Any, calls: Counter[str]) -> Scenario:
    async def approve(node_input: str) -> Any:
        calls["approve"] += 1
        yield m.RequestInput(interrupt_id="approve", message=f"Approve {node_input}?")

    child = m.FunctionNode(func=approve)

    async def orchestrate(ctx: Any, node_input: str) -> str:
        calls["orchestrate"] += 1
        answer = await ctx.run_node(child, node_input)
        return f"approved={answer}"

    edges = [(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    return in_wf(m, edges, answers=[{"approve": "yes"}])


@scenario
def interrupt_in_nested_workflow(m: Any, calls: Counter[str]) -> Scenario:
    async def ask(node_input: str) -> Any:
        calls["ask"] += 1
        yield m.RequestInput(interrupt_id="inner-q", message="?")

    inner = m.Workflow(name="inner", edges=[(m.START, m.FunctionNode(func=ask), step(m, calls, "x"))])
    edges = [(m.START, inner, step(m, calls, "after"))]
    return in_wf(m, edges, answers=[{"inner-q": "yes"}])


@scenario
def parallel_interrupts_one_at_a_time(m: Any, calls: Counter[str]) -> Scenario:
    async def worker(ctx: Any, node_input: int) -> Any:
        calls[f"worker{node_input}"] += 1
        if node_input % 2:
            yield node_input
            return
        key = f"w{node_input}"
        if key in ctx.resume_inputs:
            yield ctx.resume_inputs[key]
            return
        yield m.RequestInput(interrupt_id=key, message="?")

    child = m.FunctionNode(func=worker, rerun_on_resume=True)

    async def supervisor(ctx: Any, node_input: str) -> list[Any]:
        calls["supervisor"] += 1
        tasks = [ctx.run_node(child, i, run_id=f"item-{i}") for i in range(4)]
        return list(await asyncio.gather(*tasks))

    edges = [(m.START, m.FunctionNode(func=supervisor, rerun_on_resume=True))]
    return in_wf(m, edges, answers=[{"w0": "zero"}, {"w2": "two"}])


@scenario
def retry_config(m: Any, calls: Counter[str]) -> Scenario:
    async def flaky(ctx: Any, node_input: str) -> str:
        calls["flaky"] += 1
        if ctx.attempt_count < 3:
            raise ConnectionError("try again")
        return f"{node_input} after {ctx.attempt_count}"

    retry = m.RetryConfig(max_attempts=3, initial_delay=0, jitter=0)
    edges = [(m.START, m.FunctionNode(func=flaky, retry_config=retry))]
    return in_wf(m, edges)


@scenario
def node_failure(m: Any, calls: Counter[str]) -> Scenario:
    def broken(node_input: str) -> str:
        calls["broken"] += 1
        raise KeyError("missing")

    edges = [
        (m.START, step(m, calls, "before", first=True), m.FunctionNode(func=broken), step(m, calls, "after"))
    ]
    return in_wf(m, edges)


# -- agent teams (issue 26 item 2) --------------------------------------------------------


@scenario
def team_single_turn_result_returns_to_coordinator(m: Any, calls: Counter[str]) -> Scenario:
    # ADK's collaboration page: a single_turn sub-agent is its parent's tool; its answer is the
    # tool's result and the coordinator's final answer is the node's output.
    weather = m.Agent(
        name="weather_checker",
        model=m.scripted("weather_checker", calls, [("text", "Sunny in {last}")]),
        mode="single_turn",
        description="Checks the weather.",
        output_key="forecast",
    )
    planner = m.Agent(
        name="planner",
        model=m.scripted(
            "planner", calls, [("call", "weather_checker", {"request": "Rome"}), ("text", "Plan: {last}")]
        ),
        mode="single_turn",
        sub_agents=[weather],
    )
    edges = [(m.START, planner)]
    return in_wf(m, edges, input="a trip", observe=("wf@1/planner@1",))


# -- issue 25, items 1-12 ------------------------------------------------------------------


@scenario
def item1_fan_in_without_join(m: Any, calls: Counter[str]) -> Scenario:
    a, b, c = step(m, calls, "a", first=True), step(m, calls, "b", first=True), step(m, calls, "c")
    return in_wf(m, [(m.START, (a, b), c)])


@scenario
def item1_loop_ending_at_terminal(m: Any, calls: Counter[str]) -> Scenario:
    def count(ctx: Any, node_input: Any) -> Any:
        calls["count"] += 1
        ctx.state["n"] = ctx.state.get("n", 0) + 1
        return m.Event(output=ctx.state["n"], route="more" if ctx.state["n"] < 2 else "stop")

    def end(node_input: int) -> int:
        calls["end"] += 1
        return node_input * 10

    counter, last = m.FunctionNode(func=count), m.FunctionNode(func=end)
    edges = [(m.START, counter), (counter, {"more": counter, "stop": last})]
    return in_wf(m, edges)


@scenario
def item1_two_terminals_fail(m: Any, calls: Counter[str]) -> Scenario:
    a, b = step(m, calls, "a", first=True), step(m, calls, "b", first=True)
    return in_wf(m, [(m.START, (a, b))])


@scenario
def item2_graph_validation_is_value_error(m: Any, calls: Counter[str]) -> Scenario:
    a = step(m, calls, "a", first=True)
    return in_wf(m, [(m.START, a), (m.START, a)])


@scenario
def item3_output_none_with_route(m: Any, calls: Counter[str]) -> Scenario:
    def decide(node_input: str) -> Any:
        calls["decide"] += 1
        return m.Event(output=None, route="go")

    def after(node_input: Any) -> str:
        calls["after"] += 1
        return f"got {node_input!r}"

    edges = [(m.START, m.FunctionNode(func=decide), {"go": m.FunctionNode(func=after)})]
    return in_wf(m, edges)


@scenario
def item3_int_and_bool_routes(m: Any, calls: Counter[str]) -> Scenario:
    def number(node_input: str) -> Any:
        calls["number"] += 1
        return m.Event(output=node_input, route=2)

    def flag(node_input: str) -> Any:
        calls["flag"] += 1
        return m.Event(output=node_input, route=True)

    two, yes, done = step(m, calls, "two"), step(m, calls, "yes"), step(m, calls, "done")
    flagger = m.FunctionNode(func=flag)
    edges = [(m.START, m.FunctionNode(func=number), {2: flagger}), (flagger, {True: yes}), (yes, two, done)]
    return in_wf(m, edges)


@scenario
def item4_parallel_worker_single_item(m: Any, calls: Counter[str]) -> Scenario:
    def upper(node_input: str) -> str:
        calls["upper"] += 1
        return node_input.upper()

    edges = [(m.START, m.node(upper, parallel_worker=True))]
    return in_wf(m, edges, input="solo")


@scenario
def item5_bytes_output(m: Any, calls: Counter[str]) -> Scenario:
    def raw(node_input: str) -> bytes:
        calls["raw"] += 1
        return node_input.encode()

    def size(node_input: Any) -> int:
        calls["size"] += 1
        return len(node_input)

    edges = [(m.START, m.FunctionNode(func=raw), m.FunctionNode(func=size))]
    return in_wf(m, edges)


class Person(BaseModel):
    name: str
    age: int = 0


@scenario
def item10_model_output_reaches_successor_as_dict(m: Any, calls: Counter[str]) -> Scenario:
    def make(node_input: str) -> Person:
        calls["make"] += 1
        return Person(name=node_input)

    def describe(node_input: Any) -> str:
        calls["describe"] += 1
        return type(node_input).__name__

    edges = [(m.START, m.FunctionNode(func=make), m.FunctionNode(func=describe))]
    return in_wf(m, edges, input="ann")


@scenario
def item9_parameters_from_state(m: Any, calls: Counter[str]) -> Scenario:
    def seed(node_input: str) -> Any:
        calls["seed"] += 1
        return m.Event(output=node_input, state={"count": 3})

    def use(node_input: str, count: int) -> str:
        calls["use"] += 1
        return node_input * count

    edges = [(m.START, m.FunctionNode(func=seed), m.FunctionNode(func=use))]
    return in_wf(m, edges, input="ab")


@scenario
def item12_retry_exceptions_by_name(m: Any, calls: Counter[str]) -> Scenario:
    async def flaky(ctx: Any, node_input: str) -> str:
        calls["flaky"] += 1
        if ctx.attempt_count < 2:
            raise TimeoutError("slow")
        return "ok"

    retry = m.RetryConfig(max_attempts=3, initial_delay=0, jitter=0, exceptions=["TimeoutError"])
    edges = [(m.START, m.FunctionNode(func=flaky, retry_config=retry))]
    return in_wf(m, edges)


# -- issue 25, items 13-18 -----------------------------------------------------------------


def _asking_about(m: Any, calls: Counter[str]) -> Any:
    """A node ``ask`` that asks question ``q`` about its input, each time it runs."""

    async def ask(node_input: str) -> Any:
        calls["ask"] += 1
        yield m.RequestInput(interrupt_id="q", message=f"about {node_input}?")

    return m.FunctionNode(func=ask)


@scenario
def item13_retrigger_while_waiting(m: Any, calls: Counter[str]) -> Scenario:
    a, b = step(m, calls, "a", first=True), step(m, calls, "b", first=True)
    asker = _asking_about(m, calls)
    edges = [(m.START, (a, b), asker, step(m, calls, "after"))]
    return in_wf(m, edges, answers=[{"q": "first"}, {"q": "second"}])


@scenario
def item13_retrigger_while_waiting_one_terminal_output(m: Any, calls: Counter[str]) -> Scenario:
    def after(ctx: Any, node_input: Any) -> None:  # no output: only one terminal output in all
        calls["after"] += 1
        ctx.state["seen"] = [*ctx.state.get("seen", []), node_input]

    a, b = step(m, calls, "a", first=True), step(m, calls, "b", first=True)
    edges = [(m.START, (a, b), _asking_about(m, calls), m.FunctionNode(func=after))]
    return in_wf(m, edges, answers=[{"q": "first"}, {"q": "second"}])


@scenario
def item14_partial_answer_rerun(m: Any, calls: Counter[str]) -> Scenario:
    async def ask_two(ctx: Any, node_input: str) -> Any:
        calls["ask_two"] += 1
        missing = [key for key in ("q1", "q2") if key not in ctx.resume_inputs]
        if not missing:
            yield f"{ctx.resume_inputs['q1']}+{ctx.resume_inputs['q2']}"
            return
        for key in missing:
            yield m.RequestInput(interrupt_id=key, message=key)

    edges = [(m.START, m.FunctionNode(func=ask_two, rerun_on_resume=True))]
    return in_wf(m, edges, answers=[{"q1": "one"}, {"q2": "two"}])


@scenario
def item14_partial_answer_fast_forward(m: Any, calls: Counter[str]) -> Scenario:
    async def ask_two(node_input: str) -> Any:
        calls["ask_two"] += 1
        yield m.RequestInput(interrupt_id="q1", message="q1")
        yield m.RequestInput(interrupt_id="q2", message="q2")

    edges = [(m.START, m.FunctionNode(func=ask_two), step(m, calls, "after", "done"))]
    return in_wf(m, edges, answers=[{"q1": "one"}, {"q2": "two"}])


@scenario
def item15_ctx_route_kept_on_fast_forward(m: Any, calls: Counter[str]) -> Scenario:
    async def ask(ctx: Any, node_input: str) -> Any:
        calls["ask"] += 1
        ctx.route = "go"
        yield m.RequestInput(interrupt_id="q", message="?")

    go, stop = step(m, calls, "go"), step(m, calls, "stop")
    edges = [(m.START, m.FunctionNode(func=ask), {"go": go, "stop": stop})]
    return in_wf(m, edges, answers=[{"q": "x"}])


@scenario
def item15_event_route_kept_on_fast_forward(m: Any, calls: Counter[str]) -> Scenario:
    async def ask(node_input: str) -> Any:
        calls["ask"] += 1
        yield m.Event(route="go")
        yield m.RequestInput(interrupt_id="q", message="?")

    go, stop = step(m, calls, "go"), step(m, calls, "stop")
    edges = [(m.START, m.FunctionNode(func=ask), {"go": go, "stop": stop})]
    return in_wf(m, edges, answers=[{"q": "x"}])


@scenario
def item16_fast_forward_writes_no_output_event(m: Any, calls: Counter[str]) -> Scenario:
    async def ask(node_input: str) -> Any:
        calls["ask"] += 1
        yield m.RequestInput(interrupt_id="q", message="?", payload={"about": node_input})

    edges = [(m.START, m.FunctionNode(func=ask), step(m, calls, "next"))]
    return in_wf(m, edges, answers=[{"q": "ann"}])


async def _slow(calls: Counter[str], name: str) -> str:
    calls[f"{name}_started"] += 1
    await asyncio.sleep(0.3)
    calls[f"{name}_finished"] += 1
    return name


def _failing_and_slow(m: Any, calls: Counter[str]) -> tuple[Any, Any]:
    """Two nodes: ``fail`` raises soon, ``slow`` would finish later (if not cancelled)."""

    async def fail(node_input: str) -> str:
        calls["fail"] += 1
        await asyncio.sleep(0.01)
        raise RuntimeError("boom")

    async def slow(node_input: str) -> str:
        return await _slow(calls, "slow")

    return m.FunctionNode(func=fail), m.FunctionNode(func=slow)


@scenario
def item17_failure_cancels_graph_siblings(m: Any, calls: Counter[str]) -> Scenario:
    fail, slow = _failing_and_slow(m, calls)
    join = m.JoinNode(name="join")
    edges = [(m.START, (fail, slow), join)]
    return in_wf(m, edges)


@scenario
def item17_failure_cancels_parallel_workers(m: Any, calls: Counter[str]) -> Scenario:
    async def work(node_input: int) -> str:
        if node_input == 0:
            calls["fail"] += 1
            await asyncio.sleep(0.01)
            raise RuntimeError("boom")
        return await _slow(calls, "worker")

    def items(node_input: str) -> list[int]:
        return [0, 1, 2]

    edges = [(m.START, m.FunctionNode(func=items), m.node(work, parallel_worker=True))]
    return in_wf(m, edges)


@scenario
def item17_failure_cancels_nested_workflow(m: Any, calls: Counter[str]) -> Scenario:
    fail, slow = _failing_and_slow(m, calls)
    inner = m.Workflow(name="inner", edges=[(m.START, slow)])
    join = m.JoinNode(name="join")
    edges = [(m.START, (fail, inner), join)]
    return in_wf(m, edges)


def _broken(m: Any, calls: Counter[str]) -> Any:
    """A node ``broken`` that raises ``KeyError``: the child the item 18 orchestrators run."""

    def broken(node_input: str) -> str:
        calls["broken"] += 1
        raise KeyError(node_input)

    return m.FunctionNode(func=broken)


@scenario
def item18_dynamic_failure_caught(m: Any, calls: Counter[str]) -> Scenario:
    child = _broken(m, calls)

    async def orchestrate(ctx: Any, node_input: str) -> str:
        calls["orchestrate"] += 1
        try:
            return await ctx.run_node(child, node_input)
        except m.DynamicNodeFailError as failure:
            return f"caught {type(failure.error).__name__}"

    edges = [(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    return in_wf(m, edges)


@scenario
def item18_dynamic_failure_uncaught(m: Any, calls: Counter[str]) -> Scenario:
    child = _broken(m, calls)

    async def orchestrate(ctx: Any, node_input: str) -> str:
        calls["orchestrate"] += 1
        return await ctx.run_node(child, node_input)

    edges = [(m.START, m.FunctionNode(func=orchestrate, rerun_on_resume=True))]
    return in_wf(m, edges)
