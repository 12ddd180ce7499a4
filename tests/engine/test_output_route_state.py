"""Issue 2, item 2: output, route and state, each through a yield and through ``ctx``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    BaseNode,
    Context,
    Event,
    InMemoryEventStore,
    JoinNode,
    RequestInput,
    RetryConfig,
    Runner,
    Workflow,
    node,
)


class Boom(Exception):
    pass


# -- output ---------------------------------------------------------------------------


class YieldOutput(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield node_input * 2


class CtxOutput(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        ctx.output = node_input * 3
        return
        yield


async def test_yielded_output_is_an_output_event(read_log: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, YieldOutput(name="y"))]))
    result = await runner.run(5)
    assert result.output == 10
    log = await read_log(runner, result.session_id)
    [event] = log.output_events()
    assert event.kind == "output"
    assert event.node_path == "wf@1/y@1"
    assert event.output == 10
    assert event.output_for == ["wf@1/y@1", "wf@1"]


async def test_ctx_output_rides_on_the_completed_event(read_log: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, CtxOutput(name="c"))]))
    result = await runner.run(5)
    assert result.output == 15
    log = await read_log(runner, result.session_id)
    [event] = log.output_events()
    assert event.kind == "completed"
    assert event.node_path == "wf@1/c@1"
    assert event.output_for == ["wf@1/c@1", "wf@1"]


async def test_yielded_output_is_persisted_before_a_later_failure(read_log: Any) -> None:
    class YieldThenFail(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield "kept"
            raise Boom("after the yield")

    runner = Runner(Workflow(name="wf", edges=[(START, YieldThenFail(name="n"))]))
    result = await runner.run(None)
    assert result.status == "failed"
    log = await read_log(runner, result.session_id)
    assert log.outputs() == {"wf@1/n@1": "kept"}


async def test_ctx_output_is_deferred_and_lost_on_failure(read_log: Any) -> None:
    class SetThenFail(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.output = "never stored"
            raise Boom("before the end")
            yield

    runner = Runner(Workflow(name="wf", edges=[(START, SetThenFail(name="n"))]))
    result = await runner.run(None)
    assert result.status == "failed"
    log = await read_log(runner, result.session_id)
    assert log.outputs() == {}


async def test_a_second_yielded_output_fails_the_node(read_log: Any) -> None:
    def twice(node_input: Any):  # type: ignore[no-untyped-def]
        yield "first"
        yield "second"

    runner = Runner(Workflow(name="wf", edges=[(START, twice)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert "at most one output" in result.error
    log = await read_log(runner, result.session_id)
    assert log.outputs() == {"wf@1/twice@1": "first"}
    assert len(log.errors()) == 1


async def test_ctx_output_set_twice_fails_the_node() -> None:
    class Twice(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.output = 1
            ctx.output = 2
            return
            yield

    result = await Runner(Workflow(name="wf", edges=[(START, Twice(name="t"))])).run(None)
    assert result.status == "failed"
    assert "at most one output" in result.error


async def test_yield_then_ctx_output_fails_the_node() -> None:
    class Mixed(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield 1
            ctx.output = 2

    result = await Runner(Workflow(name="wf", edges=[(START, Mixed(name="m"))])).run(None)
    assert result.status == "failed"
    assert "at most one output" in result.error


async def test_event_output_counts_as_the_output() -> None:
    def f(node_input: Any):  # type: ignore[no-untyped-def]
        yield Event(output={"answer": 42})

    result = await Runner(Workflow(name="wf", edges=[(START, f)])).run(None)
    assert result.output == {"answer": 42}


# -- route ------------------------------------------------------------------------------


def _routing_workflow(router: Any) -> Workflow:
    def approve(node_input: Any) -> str:
        return f"approved {node_input}"

    def reject(node_input: Any) -> str:
        return f"rejected {node_input}"

    return Workflow(name="wf", edges=[(START, router, {"approve": approve, "reject": reject})])


class YieldRoute(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield Event(route="approve" if node_input > 0.8 else "reject")


class CtxRoute(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        ctx.route = "approve" if node_input > 0.8 else "reject"
        yield node_input


async def test_yielded_route_selects_the_edge(read_log: Any) -> None:
    runner = Runner(_routing_workflow(YieldRoute(name="router")))
    high = await runner.run(0.9)
    low = await runner.run(0.1)
    # A route-only yield gives no output: the successor receives None.
    assert high.output == "approved None"
    assert low.output == "rejected None"
    log = await read_log(runner, high.session_id)
    [route_event] = [e for e in log.events if e.route is not None]
    assert route_event.kind == "route"
    assert route_event.node_path == "wf@1/router@1"
    assert route_event.route == "approve"
    assert log.started() == ["wf@1", "wf@1/router@1", "wf@1/approve@1"]


async def test_ctx_route_selects_the_edge_and_output_flows_on(read_log: Any) -> None:
    runner = Runner(_routing_workflow(CtxRoute(name="router")))
    high = await runner.run(0.9)
    low = await runner.run(0.1)
    assert high.output == "approved 0.9"
    assert low.output == "rejected 0.1"
    log = await read_log(runner, low.session_id)
    assert log.routes() == {"wf@1/router@1": "reject"}
    assert "wf@1/approve@1" not in log.started()


async def test_ctx_route_in_a_function_node() -> None:
    def router(ctx: Context, node_input: float) -> float:
        ctx.route = "approve" if node_input > 0.8 else "reject"
        return node_input

    runner = Runner(_routing_workflow(router))
    assert (await runner.run(0.95)).output == "approved 0.95"
    assert (await runner.run(0.5)).output == "rejected 0.5"


async def test_ctx_route_set_several_times_keeps_the_last() -> None:
    class Fickle(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.route = "approve"
            ctx.route = "reject"
            yield "x"

    result = await Runner(_routing_workflow(Fickle(name="router"))).run(None)
    assert result.output == "rejected x"


async def test_event_with_output_and_route_together() -> None:
    def router(node_input: Any):  # type: ignore[no-untyped-def]
        yield Event(output="payload", route="reject")

    result = await Runner(_routing_workflow(router)).run(None)
    assert result.output == "rejected payload"


# -- state ------------------------------------------------------------------------------


async def test_state_event_is_a_state_only_event(read_log: Any) -> None:
    class Counter(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield Event(state={"count": 1})

    runner = Runner(Workflow(name="wf", edges=[(START, Counter(name="counter"))]))
    result = await runner.run(None)
    assert result.status == "completed"
    log = await read_log(runner, result.session_id)
    [event] = [e for e in log.events if e.state]
    assert event.kind == "state"
    assert event.node_path == "wf@1/counter@1"
    assert event.state == {"count": 1}
    assert event.output is None


async def test_ctx_state_rides_on_the_next_yielded_event(read_log: Any) -> None:
    class Writer(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.state["count"] = 1
            yield "result"

    runner = Runner(Workflow(name="wf", edges=[(START, Writer(name="w"))]))
    result = await runner.run(None)
    log = await read_log(runner, result.session_id)
    [event] = [e for e in log.events if e.state]
    assert event.kind == "output"
    assert event.output == "result"
    assert event.state == {"count": 1}


async def test_ctx_state_without_a_later_yield_rides_on_the_completed_event(read_log: Any) -> None:
    def writer(ctx: Context, node_input: Any) -> str:
        ctx.state["count"] = 2
        ctx.state["who"] = "writer"
        return "done"

    runner = Runner(Workflow(name="wf", edges=[(START, writer)]))
    result = await runner.run(None)
    log = await read_log(runner, result.session_id)
    [event] = [e for e in log.events if e.state]
    assert event.kind == "completed"
    assert event.output == "done"
    assert event.state == {"count": 2, "who": "writer"}


async def test_ctx_state_and_event_state_merge_on_one_event(read_log: Any) -> None:
    class Both(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.state["a"] = 1
            yield Event(state={"b": 2})

    runner = Runner(Workflow(name="wf", edges=[(START, Both(name="both"))]))
    result = await runner.run(None)
    log = await read_log(runner, result.session_id)
    [event] = [e for e in log.events if e.state]
    assert event.state == {"a": 1, "b": 2}


async def test_node_reads_its_own_state_writes() -> None:
    def f(ctx: Context, node_input: Any) -> Any:
        ctx.state["x"] = 5
        return ctx.state["x"] + 1

    assert (await Runner(Workflow(name="wf", edges=[(START, f)])).run(None)).output == 6


async def test_state_is_visible_to_later_nodes() -> None:
    def first(node_input: Any):  # type: ignore[no-untyped-def]
        yield Event(state={"from_event": "e"})

    def second(ctx: Context, node_input: Any) -> Any:
        ctx.state["from_ctx"] = "c"
        return "ok"

    def third(ctx: Context, node_input: Any) -> dict[str, Any]:
        return {"from_event": ctx.state["from_event"], "from_ctx": ctx.state["from_ctx"]}

    result = await Runner(Workflow(name="wf", edges=[(START, first, second, third)])).run(None)
    assert result.output == {"from_event": "e", "from_ctx": "c"}


async def test_later_writes_overwrite_earlier_ones(read_log: Any) -> None:
    def first(ctx: Context, node_input: Any) -> Any:
        ctx.state["n"] = 1
        return None

    def second(ctx: Context, node_input: Any) -> Any:
        ctx.state["n"] = ctx.state["n"] + 1
        return None

    def third(ctx: Context, node_input: Any) -> Any:
        return ctx.state["n"]

    runner = Runner(Workflow(name="wf", edges=[(START, first, second, third)]))
    result = await runner.run(None)
    assert result.output == 2
    assert (await read_log(runner, result.session_id)).state() == {"n": 2}


async def test_state_is_rebuilt_from_the_log_on_resume(calls: Any) -> None:
    def before(ctx: Context, node_input: Any) -> Any:
        calls["before"] += 1
        ctx.state["note"] = f"input was {node_input}"
        return node_input

    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        calls["ask"] += 1
        yield RequestInput(message="go?", interrupt_id="go")

    def after(ctx: Context, node_input: Any, note: str) -> str:
        calls["after"] += 1
        return f"{note}; answer {node_input}; ctx says {ctx.state['note']}"

    wf = Workflow(name="wf", edges=[(START, before, ask, after)])
    first_store = InMemoryEventStore()
    first = await Runner(wf, store=first_store).run(7)
    assert first.status == "waiting"

    # A new runner over a store loaded from saved data knows only the log.
    loaded = InMemoryEventStore.load(first_store.dump(first.session_id))
    result = await Runner(wf, store=loaded).resume(first.session_id, {"go": "yes"})
    assert result.status == "completed"
    assert result.output == "input was 7; answer yes; ctx says input was 7"
    assert calls == {"before": 1, "ask": 1, "after": 1}


@dataclass
class Point:
    x: int
    y: int


class Tag(BaseModel):
    label: str


async def test_dataclass_and_model_list_outputs_are_restored_after_replay(calls: Any) -> None:
    def point(node_input: Any) -> Point:
        calls["point"] += 1
        return Point(1, 2)

    def tags(node_input: Any) -> list[Tag]:
        calls["tags"] += 1
        return [Tag(label="a"), Tag(label="b")]

    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="go")

    seen: list[Any] = []

    def combine(node_input: dict[str, Any]) -> str:
        seen.append(node_input)
        return "ok"

    join = JoinNode(name="join")
    wf = Workflow(name="wf", edges=[(START, (point, tags, ask), join, combine)])
    store = InMemoryEventStore()
    sid = (await Runner(wf, store=store).run(None)).session_id
    loaded = InMemoryEventStore.load(store.dump(sid))
    result = await Runner(wf, store=loaded).resume(sid, {"go": True})
    assert result.output == "ok"
    assert calls == {"point": 1, "tags": 1}
    [received] = seen
    assert received["point"] == Point(1, 2)
    assert received["tags"] == [Tag(label="a"), Tag(label="b")]


class Opaque:
    pass


async def test_unstorable_state_fails_the_node_naming_it(read_log: Any) -> None:
    def writer(ctx: Context, node_input: Any) -> str:
        ctx.state["handle"] = Opaque()
        return "never stored"

    runner = Runner(Workflow(name="wf", edges=[(START, writer)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert "writer" in result.error and "Opaque" in result.error
    log = await read_log(runner, result.session_id)
    assert log.output_events() == []
    assert log.state() == {}
    assert [e.node_path for e in log.errors()] == ["wf@1/writer@1"]


async def test_unstorable_output_writes_no_half_node(read_log: Any) -> None:
    def make(node_input: Any) -> Any:
        return Opaque()

    runner = Runner(Workflow(name="wf", edges=[(START, make)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert "make" in result.error and "Opaque" in result.error
    log = await read_log(runner, result.session_id)
    assert log.output_events() == []
    assert [e.node_path for e in log.errors()] == ["wf@1/make@1"]
    assert log.of_kind("completed") == []


@pytest.mark.parametrize("bad_route", [1.5, {"x": 1}])
async def test_a_route_that_is_not_str_int_or_bool_fails_the_node(bad_route: Any, read_log: Any) -> None:
    def router(ctx: Context, node_input: Any) -> str:
        ctx.route = bad_route
        return "value"

    def target(node_input: Any) -> str:
        return "reached"

    runner = Runner(Workflow(name="wf", edges=[(START, router, {"x": target})]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert "router" in result.error and "route" in result.error
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/router@1"]
    assert [e.node_path for e in log.of_kind("completed")] == []


async def test_concurrent_sessions_keep_their_own_state_and_outputs() -> None:
    async def remember(ctx: Context, node_input: int) -> int:
        ctx.state["mine"] = node_input
        for _ in range(5):
            await asyncio.sleep(0)
        return node_input

    async def recall(ctx: Context, node_input: int, mine: int) -> list[int]:
        for _ in range(5):
            await asyncio.sleep(0)
        return [node_input, mine, ctx.state["mine"]]

    runner = Runner(Workflow(name="wf", edges=[(START, remember, recall)]))
    results = await asyncio.gather(*(runner.run(n) for n in range(6)))
    assert [r.output for r in results] == [[n, n, n] for n in range(6)]
    assert len({r.session_id for r in results}) == 6


async def test_an_unstorable_returned_output_is_retried_by_the_nodes_policy(read_log: Any) -> None:
    @node(retry_config=RetryConfig(max_attempts=2, initial_delay=0, jitter=0))
    def make(ctx: Context, node_input: Any) -> Any:
        return Opaque() if ctx.attempt_count == 1 else "fine"

    runner = Runner(Workflow(name="wf", edges=[(START, make)]))
    result = await runner.run(None)
    assert result.status == "completed", result.error
    assert result.output == "fine"
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/make@1"]
