"""The Python examples of seed 000 (the workflow architecture) run as tests.

The seed shows ``_run_impl`` bodies on their own; each test puts a body in a ``BaseNode`` subclass
and runs it with ``Runner``. Names the seed uses without defining (``compute``, ``result``,
``some_node``, ``input_data``, ``worker``, ``Leaf``) are defined here; each test's docstring lists
them. Execution counts are read from the log (one ``started`` event per execution of a path).
"""

from __future__ import annotations

from typing import Any

from engine import BaseNode, Context, Event, InMemoryEventStore, Runner, Workflow, node


def runs(log: Any, path: str) -> int:
    return log.started().count(path)


def compute(node_input: Any) -> Any:
    return node_input * 2


# -- Implementing a graph node: output ------------------------------------------------------


class YieldOutput(BaseNode):
    # Yield (persisted immediately)
    async def _run_impl(self, *, ctx, node_input):
        yield compute(node_input)


class DeferredOutput(BaseNode):
    # ctx (deferred until node end)
    async def _run_impl(self, *, ctx, node_input):
        ctx.output = compute(node_input)
        return
        yield


async def test_output_yielded_and_deferred(store: InMemoryEventStore, read_log: Any) -> None:
    """Run both output forms in a chain.

    Defined here: compute (doubles its input).
    """
    wf = Workflow(name="wf", edges=[("START", YieldOutput(name="yielded"), DeferredOutput(name="deferred"))])
    runner = Runner(wf, store=store)
    result = await runner.run(5)

    assert result.output == 20
    log = await read_log(runner, result.session_id)
    assert [e.kind for e in log.output_events() if e.node_path == "wf@1/yielded@1"] == ["output"]
    assert [e.kind for e in log.output_events() if e.node_path == "wf@1/deferred@1"] == ["completed"]
    assert log.outputs()["wf@1/yielded@1"] == 10
    assert log.output_events()[-1].output_for == ["wf@1/deferred@1", "wf@1"]
    assert runs(log, "wf@1/yielded@1") == runs(log, "wf@1/deferred@1") == 1


# -- Implementing a graph node: routing -----------------------------------------------------


class YieldRoute(BaseNode):
    # Yield (persisted immediately)
    async def _run_impl(self, *, ctx, node_input):
        yield Event(route="approve" if node_input > 0.8 else "reject")


class DeferredRoute(BaseNode):
    # ctx (deferred until node end)
    async def _run_impl(self, *, ctx, node_input):
        ctx.route = "approve" if node_input > 0.8 else "reject"
        yield node_input


def routed_workflow(router: BaseNode) -> Workflow:
    @node
    def approve(node_input: Any) -> str:
        return f"approved {node_input}"

    @node
    def reject(node_input: Any) -> str:
        return f"rejected {node_input}"

    return Workflow(name="wf", edges=[("START", router), (router, {"approve": approve, "reject": reject})])


async def test_routing_yielded_and_deferred(store: InMemoryEventStore, read_log: Any) -> None:
    """Route with both forms; the yielded form emits no output, so its successor gets None.

    Defined here: the approve and reject successor nodes.
    """
    cases = [
        (YieldRoute(name="router"), 0.9, "approved None", "approve"),
        (YieldRoute(name="router"), 0.2, "rejected None", "reject"),
        (DeferredRoute(name="router"), 0.9, "approved 0.9", "approve"),
        (DeferredRoute(name="router"), 0.2, "rejected 0.2", "reject"),
    ]
    for router, score, expected, taken in cases:
        runner = Runner(routed_workflow(router), store=store)
        result = await runner.run(score)
        assert result.output == expected
        log = await read_log(runner, result.session_id)
        assert log.routes()["wf@1/router@1"] == taken
        assert runs(log, f"wf@1/{taken}@1") == 1


# -- Implementing a graph node: state -------------------------------------------------------


class YieldState(BaseNode):
    # Yield (persisted immediately)
    async def _run_impl(self, *, ctx, node_input):
        yield Event(state={"count": 1})


class DeferredState(BaseNode):
    # ctx (flushed onto next/final Event)
    async def _run_impl(self, *, ctx, node_input):
        result = f"counted {node_input}"
        ctx.state["count"] = 1
        yield result


async def test_state_yielded_and_flushed_onto_the_next_event(
    store: InMemoryEventStore, read_log: Any
) -> None:
    """Write state both ways.

    Defined here: result (the deferred-state node's output).
    """
    for writer, kind, output in (
        (YieldState(name="writer"), "state", None),
        (DeferredState(name="writer"), "output", "counted x"),
    ):

        @node
        def reader(count: int, node_input: Any = None) -> int:
            return count + 1

        runner = Runner(Workflow(name="wf", edges=[("START", writer, reader)]), store=store)
        result = await runner.run("x")

        assert result.output == 2
        log = await read_log(runner, result.session_id)
        (event,) = [e for e in log.events if e.node_path == "wf@1/writer@1" and e.state]
        assert event.kind == kind
        assert event.state == {"count": 1}
        assert event.output == output
        assert log.state() == {"count": 1}


# -- Implementing a graph node: interrupts --------------------------------------------------


class AskApproval(BaseNode):
    rerun_on_resume: bool = True

    async def _run_impl(self, *, ctx, node_input):
        if ctx.resume_inputs and "fc-1" in ctx.resume_inputs:
            yield f"approved: {ctx.resume_inputs['fc-1']}"
            return
        yield Event(long_running_tool_ids={"fc-1"})


async def test_interrupts_by_long_running_tool_ids(store: InMemoryEventStore, read_log: Any) -> None:
    """Interrupt with a bare long-running tool id and resume with ctx.resume_inputs.

    The node sets rerun_on_resume=True, as the seed's text says the re-execution needs.
    """
    runner = Runner(Workflow(name="wf", edges=[("START", AskApproval(name="ask"))]), store=store)
    first = await runner.run()
    assert first.status == "waiting"
    assert [(i.id, i.node_path) for i in first.interrupts] == [("fc-1", "wf@1/ask@1")]

    result = await runner.resume(first.session_id, {"fc-1": "yes"})

    assert result.output == "approved: yes"
    assert runs(await read_log(runner, first.session_id), "wf@1/ask@1") == 2


# -- Dynamic nodes via ctx.run_node() -------------------------------------------------------


@node
def some_node(node_input: str) -> str:
    return node_input[::-1]


input_data = "stressed"


class Orchestrator(BaseNode):
    rerun_on_resume: bool = True  # required

    async def _run_impl(self, *, ctx, node_input):
        result = await ctx.run_node(some_node, input_data)
        yield f"child returned: {result}"


async def test_orchestrator(store: InMemoryEventStore, read_log: Any) -> None:
    """Run the Orchestrator example.

    Defined here: some_node (reverses a string) and input_data.
    """
    runner = Runner(Workflow(name="wf", edges=[("START", Orchestrator(name="graph_node_a"))]), store=store)
    result = await runner.run()

    assert result.output == "child returned: desserts"
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/graph_node_a@1/some_node@1"] == "desserts"
    assert runs(log, "wf@1/graph_node_a@1") == runs(log, "wf@1/graph_node_a@1/some_node@1") == 1


@node
def worker(node_input: str) -> str:
    return f"worked on {node_input}"


class Delegator(BaseNode):
    rerun_on_resume: bool = True

    async def _run_impl(self, *, ctx, node_input):
        # child's output becomes this node's output
        await ctx.run_node(worker, node_input, use_as_output=True)


async def test_delegator(store: InMemoryEventStore, read_log: Any) -> None:
    """Run the Delegator example, terminal and followed by another node.

    Defined here: worker, and the downstream node of the second run.
    """
    runner = Runner(Workflow(name="wf", edges=[("START", Delegator(name="delegator"))]), store=store)
    result = await runner.run("x")
    assert result.output == "worked on x"
    log = await read_log(runner, result.session_id)
    (event,) = log.output_events()
    assert event.node_path == "wf@1/delegator@1/worker@1"
    assert event.output_for == ["wf@1/delegator@1/worker@1", "wf@1/delegator@1", "wf@1"]

    @node
    def after(node_input: str) -> str:
        return node_input.upper()

    runner = Runner(Workflow(name="wf", edges=[("START", Delegator(name="delegator"), after)]), store=store)
    result = await runner.run("y")
    assert result.output == "WORKED ON Y"


class Outer(BaseNode):
    rerun_on_resume: bool = True

    async def _run_impl(self, *, ctx, node_input):
        result = await ctx.run_node(Inner(name="inner"), "data")
        yield result


class Inner(BaseNode):
    rerun_on_resume: bool = True

    async def _run_impl(self, *, ctx, node_input):
        sub = await ctx.run_node(Leaf(name="leaf"), node_input)
        yield f"inner got: {sub}"


class Leaf(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any):
        yield f"leaf({node_input})"


async def test_transitive_dynamic_nodes(store: InMemoryEventStore, read_log: Any) -> None:
    """Run Outer -> Inner -> Leaf.

    Defined here: Leaf (wraps its input).
    """
    runner = Runner(Workflow(name="wf", edges=[("START", Outer(name="outer"))]), store=store)
    result = await runner.run()

    assert result.output == "inner got: leaf(data)"
    log = await read_log(runner, result.session_id)
    assert log.started() == ["wf@1", "wf@1/outer@1", "wf@1/outer@1/inner@1", "wf@1/outer@1/inner@1/leaf@1"]
    assert {e.author for e in log.events if e.kind != "answer"} == {"wf"}
