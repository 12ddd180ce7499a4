"""Issue 2, item 5: terminal nodes and the workflow's output."""

from __future__ import annotations

from typing import Any

from engine import START, Context, FunctionNode, JoinNode, Runner, Workflow


def tag(name: str) -> FunctionNode:
    def run(node_input: Any) -> str:
        return f"{node_input}>{name}"

    return FunctionNode(run, name=name)


def silent(name: str) -> FunctionNode:
    def run(node_input: Any) -> None:
        return None

    return FunctionNode(run, name=name)


def test_nodes_without_outgoing_edges_are_terminal() -> None:
    wf = Workflow(name="wf", edges=[(START, tag("a"), (tag("b"), tag("c")))])
    terminal = {n["name"]: n["terminal"] for n in wf.describe()["nodes"]}
    assert terminal == {"START": False, "a": False, "b": True, "c": True}


async def test_the_one_terminal_output_is_the_workflow_output(read_log: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, tag("a"), tag("b"))]))
    result = await runner.run("in")
    assert result.status == "completed"
    assert result.output == "in>a>b"
    log = await read_log(runner, result.session_id)
    for_wf = [e for e in log.output_events() if "wf@1" in (e.output_for or [])]
    assert [(e.node_path, e.output_for) for e in for_wf] == [("wf@1/b@1", ["wf@1/b@1", "wf@1"])]
    assert (await runner.result(result.session_id)).output == "in>a>b"


async def test_two_terminal_outputs_fail_the_run(read_log: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, tag("a"), (tag("b"), tag("c")))]))
    result = await runner.run("in")
    assert result.status == "failed"
    assert "multiple terminal nodes produced output" in result.error
    assert result.error_type
    assert result.output is None
    log = await read_log(runner, result.session_id)
    assert len(log.errors()) == 1
    # Both terminal outputs were written before the workflow noticed.
    assert log.outputs()["wf@1/b@1"] == "in>a>b"
    assert log.outputs()["wf@1/c@1"] == "in>a>c"
    assert log.status()[-1] == "failed"
    stored = await runner.result(result.session_id)
    assert stored.status == "failed"
    assert "multiple terminal nodes produced output" in stored.error


async def test_one_terminal_output_and_one_silent_terminal_is_fine() -> None:
    wf = Workflow(name="wf", edges=[(START, tag("a"), (tag("b"), silent("c")))])
    result = await Runner(wf).run("in")
    assert result.status == "completed"
    assert result.output == "in>a>b"


async def test_routing_that_reaches_one_terminal_is_fine() -> None:
    def pick(ctx: Context, node_input: Any) -> Any:
        ctx.route = "left"
        return node_input

    wf = Workflow(name="wf", edges=[(START, pick, {"left": tag("l"), "right": tag("r")})])
    result = await Runner(wf).run("in")
    assert result.status == "completed"
    assert result.output == "in>l"


async def test_no_terminal_output_completes_without_output() -> None:
    result = await Runner(Workflow(name="wf", edges=[(START, tag("a"), silent("end"))])).run("in")
    assert result.status == "completed"
    assert result.output is None


async def test_join_makes_a_single_terminal() -> None:
    join = JoinNode(name="join")
    wf = Workflow(name="wf", edges=[(START, tag("a"), (tag("b"), tag("c")), join)])
    result = await Runner(wf).run("in")
    assert result.status == "completed"
    assert result.output == {"b": "in>a>b", "c": "in>a>c"}


async def test_nested_workflow_with_two_terminal_outputs_fails_the_outer_run(read_log: Any) -> None:
    inner = Workflow(name="inner", edges=[(START, (tag("x"), tag("y")))])
    outer = Workflow(name="outer", edges=[(START, inner, tag("after"))])
    runner = Runner(outer)
    result = await runner.run("in")
    assert result.status == "failed"
    assert "multiple terminal nodes produced output" in result.error
    log = await read_log(runner, result.session_id)
    assert len(log.errors()) == 1
    assert "outer@1/after@1" not in log.started()


async def test_a_node_with_only_conditional_edges_is_not_terminal() -> None:
    def check(ctx: Context, node_input: Any) -> str:
        ctx.route = "done"  # matches no edge: the branch ends here
        return "from check"

    a = tag("a")
    wf = Workflow(name="wf", edges=[(START, a, check, {"again": a})])
    assert {n["name"]: n["terminal"] for n in wf.describe()["nodes"]}["check"] is False
    result = await Runner(wf).run("in")
    assert result.status == "completed"
    assert result.output is None
