"""Issue 2, item 3: chains, fan-out, routing, edges, START, joins, loops, nesting, concurrency."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import Field

from engine import (
    DEFAULT_ROUTE,
    START,
    BaseNode,
    Context,
    Edge,
    Event,
    FunctionNode,
    InMemoryEventStore,
    JoinNode,
    RequestInput,
    Runner,
    Workflow,
    node,
)


def tag(name: str) -> FunctionNode:
    """A node named ``name`` that appends its name to its input (a string)."""

    def run(node_input: Any) -> str:
        return f"{node_input}>{name}"

    return FunctionNode(run, name=name)


def router(name: str, route: Any) -> FunctionNode:
    """A node that passes its input on and emits ``route`` (``None`` emits none)."""

    def run(ctx: Context, node_input: Any) -> Any:
        if route is not None:
            ctx.route = route
        return node_input

    return FunctionNode(run, name=name)


class Sink(BaseNode):
    """Records what it receives and outputs nothing (so several may be terminal)."""

    seen: list[Any] = Field(default_factory=list)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        self.seen.append(node_input)
        return
        yield


# -- chains and fan-out ----------------------------------------------------------------


async def test_chain_tuple_runs_in_order(read_log: Any) -> None:
    a, b, c = tag("a"), tag("b"), tag("c")
    runner = Runner(Workflow(name="wf", edges=[(START, a, b, c)]))
    result = await runner.run("in")
    assert result.output == "in>a>b>c"
    log = await read_log(runner, result.session_id)
    assert log.started() == ["wf@1", "wf@1/a@1", "wf@1/b@1", "wf@1/c@1"]
    assert log.outputs() == {"wf@1/a@1": "in>a", "wf@1/b@1": "in>a>b", "wf@1/c@1": "in>a>b>c"}
    assert {e.node_path: e.output_for for e in log.output_events()} == {
        "wf@1/a@1": ["wf@1/a@1"],
        "wf@1/b@1": ["wf@1/b@1"],
        "wf@1/c@1": ["wf@1/c@1", "wf@1"],
    }
    assert {e.author for e in log.events if e.kind != "answer"} == {"wf"}


async def test_fan_out_tuple_gives_every_branch_the_same_input(read_log: Any) -> None:
    left, right = Sink(name="left", seen=[]), Sink(name="right", seen=[])
    runner = Runner(Workflow(name="wf", edges=[(START, tag("a"), (left, right))]))
    result = await runner.run("in")
    assert result.status == "completed"
    assert left.seen == ["in>a"] and right.seen == ["in>a"]
    log = await read_log(runner, result.session_id)
    assert sorted(log.started()) == ["wf@1", "wf@1/a@1", "wf@1/left@1", "wf@1/right@1"]


async def test_fan_out_from_start_and_join(read_log: Any) -> None:
    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (tag("a"), tag("b")), join, tag("end"))]))
    result = await runner.run("x")
    assert result.output == f"{ {'a': 'x>a', 'b': 'x>b'} }>end"
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/join@1"] == {"a": "x>a", "b": "x>b"}
    assert log.started_count("/join@1") == 1


# -- routing ---------------------------------------------------------------------------


async def test_routing_map_follows_the_emitted_route(read_log: Any) -> None:
    def build(route: str) -> Workflow:
        return Workflow(
            name="wf",
            edges=[
                (
                    START,
                    router("step_a", route),
                    {
                        "success": tag("step_b"),
                        "failure": tag("step_c"),
                        DEFAULT_ROUTE: tag("fallback"),
                    },
                )
            ],
        )

    for route, expected in [("success", "step_b"), ("failure", "step_c"), ("other", "fallback")]:
        runner = Runner(build(route))
        result = await runner.run("in")
        assert result.output == f"in>{expected}"
        log = await read_log(runner, result.session_id)
        assert log.started() == ["wf@1", "wf@1/step_a@1", f"wf@1/{expected}@1"]


async def test_routing_map_value_may_be_a_tuple(read_log: Any) -> None:
    b, c = Sink(name="step_b", seen=[]), Sink(name="step_c", seen=[])
    wf = Workflow(
        name="wf", edges=[(START, router("step_a", "success"), {"success": (b, c), "failure": tag("f")})]
    )
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.status == "completed"
    assert b.seen == ["in"] and c.seen == ["in"]
    log = await read_log(runner, result.session_id)
    assert "wf@1/f@1" not in log.started()


async def test_default_route_string_literal() -> None:
    wf = Workflow(name="wf", edges=[(START, router("r", "zzz"), {"yes": tag("y"), "__DEFAULT__": tag("d")})])
    assert (await Runner(wf).run("in")).output == "in>d"
    assert DEFAULT_ROUTE == "__DEFAULT__"


async def test_default_route_is_not_taken_when_no_route_is_emitted(read_log: Any) -> None:
    # Seed 002: the fallback "is taken when the source node emits a route and no specific
    # conditional edge matches it" (google-adk also takes it with no route at all).
    wf = Workflow(name="wf", edges=[(START, router("r", None), {"yes": tag("y"), DEFAULT_ROUTE: tag("d")})])
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.status == "completed"
    assert result.output is None
    log = await read_log(runner, result.session_id)
    assert log.started() == ["wf@1", "wf@1/r@1"]


async def test_default_route_is_not_taken_when_a_route_matches(read_log: Any) -> None:
    wf = Workflow(name="wf", edges=[(START, router("r", "yes"), {"yes": tag("y"), DEFAULT_ROUTE: tag("d")})])
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.output == "in>y"
    assert "wf@1/d@1" not in (await read_log(runner, result.session_id)).started()


@pytest.mark.parametrize(
    ("emitted", "expected"),
    [(1, "one"), (2, "two"), (True, "true"), (False, "false"), ("1", "text_one")],
)
async def test_int_bool_and_str_routes_match_by_type_and_value(emitted: Any, expected: str) -> None:
    # Explicit edges: a dict literal cannot hold both 1 and True as keys (1 == True in Python).
    source = router("r", emitted)
    targets = [(1, "one"), (2, "two"), (True, "true"), (False, "false"), ("1", "text_one")]
    edges: list[Any] = [Edge(from_node=START, to_node=source)]
    edges += [Edge(from_node=source, to_node=tag(name), route=route) for route, name in targets]
    wf = Workflow(name="wf", edges=edges)
    assert (await Runner(wf).run("in")).output == f"in>{expected}"


async def test_str_int_and_bool_routes_in_routing_maps() -> None:
    for emitted, mapping in [
        ("go", {"go": tag("t"), "stop": tag("f")}),
        (7, {7: tag("t"), 8: tag("f")}),
        (False, {False: tag("t"), "False": tag("f")}),
    ]:
        wf = Workflow(name="wf", edges=[(START, router("r", emitted), mapping)])
        assert (await Runner(wf).run("in")).output == "in>t"


async def test_true_does_not_match_an_int_route(read_log: Any) -> None:
    wf = Workflow(name="wf", edges=[(START, router("r", True), {1: tag("one")})])
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.status == "completed"
    assert result.output is None
    assert (await read_log(runner, result.session_id)).started() == ["wf@1", "wf@1/r@1"]


async def test_one_does_not_match_a_bool_route() -> None:
    wf = Workflow(name="wf", edges=[(START, router("r", 1), {True: tag("t"), DEFAULT_ROUTE: tag("d")})])
    assert (await Runner(wf).run("in")).output == "in>d"


async def test_route_list_on_an_edge_matches_any_of_its_routes() -> None:
    r_a, r_b, r_c = node(router("r", "a")), router("r", "b"), router("r", "c")
    results = []
    for source in (r_a, r_b, r_c):
        target, other = tag("t"), tag("o")
        wf = Workflow(
            name="wf",
            edges=[
                Edge(from_node=START, to_node=source),
                Edge(from_node=source, to_node=target, route=["a", "b"]),
                Edge(from_node=source, to_node=other, route="c"),
            ],
        )
        results.append((await Runner(wf).run("in")).output)
    assert results == ["in>t", "in>t", "in>o"]


async def test_a_node_may_emit_a_list_of_routes() -> None:
    b, c, d = Sink(name="b", seen=[]), Sink(name="c", seen=[]), Sink(name="d", seen=[])

    def fan(node_input: Any):  # type: ignore[no-untyped-def]
        yield Event(route=["x", "y"])

    result = await Runner(Workflow(name="wf", edges=[(START, fan, {"x": b, "y": c, "z": d})])).run("in")
    assert result.status == "completed"
    assert len(b.seen) == 1 and len(c.seen) == 1 and d.seen == []


async def test_unconditional_edges_are_followed_whatever_the_route(read_log: Any) -> None:
    a = router("a", "anything")
    always, on_x, on_y = tag("always"), Sink(name="on_x", seen=[]), Sink(name="on_y", seen=[])
    wf = Workflow(name="wf", edges=[(START, a, always), (a, {"x": on_x, "anything": on_y})])
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.output == "in>always"
    assert on_x.seen == [] and on_y.seen == ["in"]


async def test_only_a_default_edge_is_taken_for_any_route() -> None:
    for route, expected in [("whatever", "in>d"), (False, "in>d"), (0, "in>d"), (None, None)]:
        wf = Workflow(name="wf", edges=[(START, router("r", route), {DEFAULT_ROUTE: tag("d")})])
        assert (await Runner(wf).run("in")).output == expected


async def test_unmatched_route_ends_only_that_branch(read_log: Any) -> None:
    dead_end = tag("never")
    wf = Workflow(
        name="wf",
        edges=[
            (START, router("r", "nowhere"), {"somewhere": dead_end}),
            (START, tag("other"), tag("after_other")),
        ],
    )
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.status == "completed"
    assert result.output == "in>other>after_other"
    log = await read_log(runner, result.session_id)
    assert "wf@1/never@1" not in log.started()
    assert log.errors() == []


# -- explicit edges and START ------------------------------------------------------------


async def test_explicit_edges_with_routes(read_log: Any) -> None:
    step_a, step_b, step_c = router("step_a", "failure"), tag("step_b"), tag("step_c")
    wf = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=step_a),
            Edge(from_node=step_a, to_node=step_b, route="success"),
            Edge(from_node=step_a, to_node=step_c, route="failure"),
        ],
    )
    runner = Runner(wf)
    result = await runner.run("in")
    assert result.output == "in>step_c"
    assert (await read_log(runner, result.session_id)).started() == ["wf@1", "wf@1/step_a@1", "wf@1/step_c@1"]


def test_edge_rejects_a_bare_function() -> None:
    def step(node_input: Any) -> Any:
        return node_input

    with pytest.raises(ValueError, match="instance of BaseNode"):
        Edge(from_node=START, to_node=step)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="instance of BaseNode"):
        Edge(from_node=step, to_node=tag("x"))  # type: ignore[arg-type]


def test_edge_rejects_the_start_string() -> None:
    with pytest.raises(ValueError, match="instance of BaseNode"):
        Edge(from_node="START", to_node=tag("x"))  # type: ignore[arg-type]


async def test_start_string_alias_in_chain_tuples(read_log: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[("START", tag("a"), tag("b"))]))
    result = await runner.run("in")
    assert result.output == "in>a>b"
    assert (await read_log(runner, result.session_id)).started() == ["wf@1", "wf@1/a@1", "wf@1/b@1"]


async def test_chain_tuples_and_edge_objects_mix() -> None:
    a, b = tag("a"), tag("b")
    wf = Workflow(name="wf", edges=[(START, a), Edge(from_node=a, to_node=b)])
    assert (await Runner(wf).run("in")).output == "in>a>b"


def test_describe_lists_nodes_edges_and_routes() -> None:
    a = router("a", "go")
    wf = Workflow(name="wf", edges=[(START, a, {"go": tag("b"), DEFAULT_ROUTE: tag("c")})])
    described = wf.describe()
    assert described["name"] == "wf"
    assert {n["name"] for n in described["nodes"]} == {"START", "a", "b", "c"}
    edges = {(e["source"], e["target"]): e["routes"] for e in described["edges"]}
    assert edges == {("START", "a"): [], ("a", "b"): ["go"], ("a", "c"): [DEFAULT_ROUTE]}


# -- JoinNode -----------------------------------------------------------------------------


async def test_join_waits_for_every_predecessor(read_log: Any, calls: Any) -> None:
    async def slow(node_input: str) -> str:
        for _ in range(5):
            await asyncio.sleep(0)
        return "slow"

    def fast(node_input: str) -> str:
        return "fast"

    def report(node_input: dict[str, Any]) -> dict[str, Any]:
        calls["report"] += 1
        return node_input

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (slow, fast), join, report)]))
    result = await runner.run("x")
    assert result.output == {"slow": "slow", "fast": "fast"}
    assert calls["report"] == 1
    log = await read_log(runner, result.session_id)
    started = log.started()
    assert started.index("wf@1/join@1") > started.index("wf@1/slow@1")
    join_started = next(e.seq for e in log.events if e.kind == "started" and e.node_path == "wf@1/join@1")
    done = {e.node_path: e.seq for e in log.of_kind("completed")}
    assert join_started > done["wf@1/slow@1"] and join_started > done["wf@1/fast@1"]


async def test_join_keys_a_nested_workflow_by_its_name() -> None:
    inner = Workflow(name="inner", edges=[(START, tag("x"))])
    join = JoinNode(name="join")
    result = await Runner(Workflow(name="wf", edges=[(START, (inner, tag("a")), join)])).run("in")
    assert result.output == {"inner": "in>x", "a": "in>a"}


async def test_join_with_start_as_a_predecessor_gets_the_workflow_input() -> None:
    join = JoinNode(name="join")
    a = tag("a")
    wf = Workflow(name="wf", edges=[(START, a, join), (START, join)])
    assert (await Runner(wf).run("in")).output == {"a": "in>a", "START": "in"}


async def test_a_node_with_two_predecessors_runs_once_per_predecessor(read_log: Any, calls: Any) -> None:
    # Seed 002, rule 5: "A second run comes from giving B another predecessor".
    def b(node_input: str) -> str:
        calls["b"] += 1
        return node_input

    sink = Sink(name="sink", seen=[])
    runner = Runner(Workflow(name="wf", edges=[(START, (tag("x"), tag("y")), b, sink)]))
    result = await runner.run("in")
    assert result.status == "completed"
    assert calls["b"] == 2
    assert sorted(sink.seen) == ["in>x", "in>y"]
    log = await read_log(runner, result.session_id)
    assert {"wf@1/b@1", "wf@1/b@2"} <= set(log.started())


# -- loops -----------------------------------------------------------------------------------


async def test_conditional_loop_gives_new_run_ids(read_log: Any, calls: Any) -> None:
    def a(ctx: Context, node_input: Any) -> int:
        calls["a"] += 1
        return (node_input or 0) + 1

    def b(ctx: Context, node_input: int) -> int:
        calls["b"] += 1
        ctx.route = "again" if node_input < 3 else "done"
        return node_input

    def c(node_input: int) -> str:
        calls["c"] += 1
        return f"finished at {node_input}"

    runner = Runner(Workflow(name="wf", edges=[(START, a, b, {"again": a, "done": c})]))
    result = await runner.run(None)
    assert result.output == "finished at 3"
    assert calls == {"a": 3, "b": 3, "c": 1}
    log = await read_log(runner, result.session_id)
    assert log.started() == [
        "wf@1",
        "wf@1/a@1",
        "wf@1/b@1",
        "wf@1/a@2",
        "wf@1/b@2",
        "wf@1/a@3",
        "wf@1/b@3",
        "wf@1/c@1",
    ]
    assert log.outputs()["wf@1/a@3"] == 3


async def test_join_in_a_loop_waits_again_for_every_predecessor(read_log: Any, calls: Any) -> None:
    def a(node_input: Any) -> int:
        calls["a"] += 1
        return calls["a"]

    def b(node_input: int) -> int:
        return node_input * 10

    def c(node_input: int) -> int:
        return node_input * 100

    def decide(ctx: Context, node_input: dict[str, int]) -> dict[str, int]:
        calls["decide"] += 1
        ctx.route = "again" if calls["a"] < 2 else "done"
        return node_input

    def end(node_input: dict[str, int]) -> dict[str, int]:
        return node_input

    join = JoinNode(name="join")
    wf = Workflow(name="wf", edges=[(START, a, (b, c), join, decide, {"again": a, "done": end})])
    runner = Runner(wf)
    result = await runner.run(None)
    assert result.output == {"b": 20, "c": 200}
    assert calls == {"a": 2, "decide": 2}
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/join@1"] == {"b": 10, "c": 100}
    assert log.outputs()["wf@1/join@2"] == {"b": 20, "c": 200}


async def test_conditional_self_loop(read_log: Any) -> None:
    def count(ctx: Context, node_input: Any) -> int:
        value = (node_input or 0) + 1
        ctx.route = "again" if value < 4 else "done"
        return value

    counter = FunctionNode(count, name="count")
    runner = Runner(Workflow(name="wf", edges=[(START, counter, {"again": counter, "done": tag("end")})]))
    result = await runner.run(None)
    assert result.output == "4>end"
    log = await read_log(runner, result.session_id)
    assert log.started() == [
        "wf@1",
        "wf@1/count@1",
        "wf@1/count@2",
        "wf@1/count@3",
        "wf@1/count@4",
        "wf@1/end@1",
    ]


# -- nested workflows ----------------------------------------------------------------------


async def test_nested_workflow_runs_as_a_node(read_log: Any) -> None:
    inner = Workflow(name="inner", edges=[(START, tag("x"), tag("y"))])
    outer = Workflow(name="outer", edges=[(START, tag("before"), inner, tag("after"))])
    runner = Runner(outer)
    result = await runner.run("in")
    assert result.output == "in>before>x>y>after"
    log = await read_log(runner, result.session_id)
    assert log.started() == [
        "outer@1",
        "outer@1/before@1",
        "outer@1/inner@1",
        "outer@1/inner@1/x@1",
        "outer@1/inner@1/y@1",
        "outer@1/after@1",
    ]
    by_path = {e.node_path: e for e in log.output_events()}
    assert by_path["outer@1/inner@1/x@1"].author == "inner"
    assert by_path["outer@1/before@1"].author == "outer"
    assert by_path["outer@1/inner@1/y@1"].output_for == ["outer@1/inner@1/y@1", "outer@1/inner@1"]


async def test_outer_and_inner_nodes_may_share_a_name(read_log: Any) -> None:
    inner = Workflow(name="inner", edges=[(START, tag("x"))])
    runner = Runner(Workflow(name="outer", edges=[(START, tag("x"), inner)]))
    result = await runner.run("in")
    assert result.output == "in>x>x"
    log = await read_log(runner, result.session_id)
    assert log.started() == ["outer@1", "outer@1/x@1", "outer@1/inner@1", "outer@1/inner@1/x@1"]


async def test_nested_terminal_output_is_the_outer_output(read_log: Any) -> None:
    inner = Workflow(name="inner", edges=[(START, tag("x"))])
    outer = Workflow(name="outer", edges=[(START, inner)])
    runner = Runner(outer)
    result = await runner.run("in")
    assert result.output == "in>x"
    log = await read_log(runner, result.session_id)
    [event] = [e for e in log.output_events() if e.node_path == "outer@1/inner@1/x@1"]
    assert event.output_for == ["outer@1/inner@1/x@1", "outer@1/inner@1", "outer@1"]


# -- max_concurrency --------------------------------------------------------------------------


def _concurrency_workflow(limit: int | None, gauge: dict[str, int]) -> Workflow:
    async def work(node_input: Any) -> str:
        gauge["active"] += 1
        gauge["peak"] = max(gauge["peak"], gauge["active"])
        for _ in range(10):
            await asyncio.sleep(0)
        gauge["active"] -= 1
        gauge["done"] += 1
        return "ok"

    workers = tuple(FunctionNode(work, name=f"w{i}") for i in range(5))
    join = JoinNode(name="join")
    return Workflow(name="wf", edges=[(START, workers, join)], max_concurrency=limit)


@pytest.mark.parametrize(("limit", "peak"), [(1, 1), (2, 2), (None, 5), (0, 5)])
async def test_max_concurrency_caps_parallel_nodes(limit: int | None, peak: int) -> None:
    gauge = {"active": 0, "peak": 0, "done": 0}
    result = await Runner(_concurrency_workflow(limit, gauge)).run(None)
    assert result.status == "completed"
    assert result.output == {f"w{i}": "ok" for i in range(5)}
    assert gauge["done"] == 5
    assert gauge["peak"] == peak


def test_a_workflow_reruns_on_resume_by_default() -> None:
    assert Workflow(name="wf", edges=[(START, tag("a"))]).rerun_on_resume is True
    assert tag("a").rerun_on_resume is False


async def test_nested_workflow_in_a_loop_gets_new_run_ids(read_log: Any) -> None:
    inner = Workflow(name="inner", edges=[(START, tag("x"))])

    def check(ctx: Context, node_input: str) -> str:
        ctx.route = "again" if node_input.count(">x") < 2 else "done"
        return node_input

    outer = Workflow(name="outer", edges=[(START, inner, check, {"again": inner, "done": tag("end")})])
    runner = Runner(outer)
    result = await runner.run("in")
    assert result.output == "in>x>x>end"
    log = await read_log(runner, result.session_id)
    assert "outer@1/inner@2/x@1" in log.started()
    assert log.started_count("/x@1") == 2


async def test_a_waiting_node_does_not_hold_a_concurrency_slot(calls: Any) -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        calls["ask"] += 1
        yield RequestInput(interrupt_id="q")

    def work(node_input: Any) -> str:
        calls["work"] += 1
        return "w"

    def more(node_input: Any) -> str:
        calls["more"] += 1
        return "m"

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (ask, work, more), join)], max_concurrency=1))
    waiting = await runner.run(None)
    assert waiting.status == "waiting"
    assert calls == {"ask": 1, "work": 1, "more": 1}
    result = await runner.resume(waiting.session_id, {"q": "a"})
    assert result.output == {"ask": "a", "work": "w", "more": "m"}
    assert calls == {"ask": 1, "work": 1, "more": 1}


def test_a_workflow_is_a_node() -> None:
    assert isinstance(Workflow(name="inner", edges=[(START, tag("a"))]), BaseNode)


async def test_event_author_is_the_nearest_workflow() -> None:
    def who(ctx: Context, node_input: Any) -> str:
        return f"{node_input}|{ctx.event_author}"

    inner = Workflow(name="inner", edges=[(START, FunctionNode(who, name="inner_who"))])
    outer = Workflow(name="outer", edges=[(START, FunctionNode(who, name="outer_who"), inner)])
    assert (await Runner(outer).run("in")).output == "in|outer|inner"


async def test_a_node_is_committed_before_its_successors_start(read_log: Any) -> None:
    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, tag("a"), (tag("b"), tag("c")), join, tag("d"))]))
    result = await runner.run("in")
    log = await read_log(runner, result.session_id)
    ended = {e.node_path: e.seq for e in log.of_kind("completed")}
    began = log.began()
    for before, after in [("a", "b"), ("a", "c"), ("b", "join"), ("c", "join"), ("join", "d")]:
        assert ended[f"wf@1/{before}@1"] < began[f"wf@1/{after}@1"]


async def test_bool_and_int_routes_survive_a_saved_and_loaded_log(calls: Any) -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        calls["ask"] += 1
        yield RequestInput(interrupt_id="q")

    def one(node_input: Any) -> str:
        calls["one"] += 1
        return "one"

    source, on_true, on_one = (
        router("r", True),
        FunctionNode(ask, name="on_true"),
        FunctionNode(one, name="on_one"),
    )
    wf = Workflow(
        name="wf",
        edges=[
            Edge(from_node=START, to_node=source),
            Edge(from_node=source, to_node=on_true, route=True),
            Edge(from_node=source, to_node=on_one, route=1),
        ],
    )
    store = InMemoryEventStore()
    sid = (await Runner(wf, store=store).run(None)).session_id
    loaded = InMemoryEventStore.load(store.dump(sid))
    result = await Runner(wf, store=loaded).resume(sid, {"q": "yes"})
    assert result.output == "yes"
    assert calls == {"ask": 1}
