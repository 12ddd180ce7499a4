"""The Python examples of seed 003 (dynamic agent workflows) run as tests.

The examples are kept as written, importing from ``engine`` instead of ``google.adk``. Each test's
docstring lists its adaptations (those issue 3 allows), one per line, and the names the seed uses
without defining; execution counts are read from the log (one ``started`` event per execution of
a path).
"""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel

from engine import (
    BaseNode,
    Context,
    FunctionNode,
    InMemoryEventStore,
    RequestInput,
    Runner,
    Workflow,
    node,
)
from tests.engine import seed_003_flows
from tests.engine.seed_003_flows import CityTime, city_time_function


def runs(log: Any, path: str) -> int:
    return log.started().count(path)


def dynamic_paths(log: Any, prefix: str) -> list[str]:
    return [path for path in log.started() if path.startswith(prefix + "/")]


# -- Get started ---------------------------------------------------------------------------


@node(name="hello_node")
def my_node(node_input: Any):
    return "Hello World"


# define a dynamic workflow node
@node(rerun_on_resume=True)
async def my_workflow(ctx: Context, node_input: str) -> str:
    # run_node executes a node and returns its output
    result = await ctx.run_node(my_node, node_input="hello")
    return result


async def test_get_started(store: InMemoryEventStore, read_log: Any) -> None:
    """Run the get-started workflow as written (no adaptations)."""
    root_agent = Workflow(
        name="root_agent",
        edges=[("START", my_workflow)],
    )
    runner = Runner(root_agent, store=store)
    result = await runner.run("hi")

    assert result.output == "Hello World"
    log = await read_log(runner, result.session_id)
    assert log.started() == [
        "root_agent@1",
        "root_agent@1/my_workflow@1",
        "root_agent@1/my_workflow@1/hello_node@1",
    ]
    assert log.outputs()["root_agent@1/my_workflow@1/hello_node@1"] == "Hello World"


# -- Building blocks: nodes ------------------------------------------------------------------


async def test_nodes_decorator_and_function_node_wrapper(store: InMemoryEventStore, read_log: Any) -> None:
    """Run both node forms of "Nodes" as graph nodes (no adaptations)."""

    @node(name="hello_node")
    def my_function_node(node_input: Any):
        return "Hello World"

    decorated = my_function_node

    # base function
    def my_function_node(node_input: Any):
        return "Hello World"

    # FunctionNode wrapper with options
    success_node = FunctionNode(
        my_function_node,
        name="hello",
        rerun_on_resume=True,
    )

    assert decorated.name == "hello_node" and not decorated.rerun_on_resume
    assert success_node.name == "hello" and success_node.rerun_on_resume
    for built, path in ((decorated, "wf@1/hello_node@1"), (success_node, "wf@1/hello@1")):
        runner = Runner(Workflow(name="wf", edges=[("START", built)]), store=store)
        result = await runner.run()
        assert result.output == "Hello World"
        assert runs(await read_log(runner, result.session_id), path) == 1


# -- Building blocks: workflows -----------------------------------------------------------------


async def test_workflows(store: InMemoryEventStore, read_log: Any) -> None:
    """Run the "Workflows" example.

    Defined here: my_formatting_node, which the seed uses without defining.
    """

    @node(name="hello_node")
    def my_function_node(node_input: Any):
        return "Hello World"

    @node
    def my_formatting_node(node_input: str) -> str:
        return f"** {node_input} **"

    @node(rerun_on_resume=True)
    async def my_workflow(ctx):
        # run_node executes a node and returns its output
        result = await ctx.run_node(my_function_node, node_input="Hello")
        result_formatted = await ctx.run_node(my_formatting_node, node_input=result)
        return result_formatted

    # Run the workflow
    root_agent = Workflow(
        name="root_agent",
        edges=[("START", my_workflow)],
    )
    runner = Runner(root_agent, store=store)
    result = await runner.run()

    assert result.output == "** Hello World **"
    log = await read_log(runner, result.session_id)
    assert dynamic_paths(log, "root_agent@1/my_workflow@1") == [
        "root_agent@1/my_workflow@1/hello_node@1",
        "root_agent@1/my_workflow@1/my_formatting_node@1",
    ]


# -- Data handling ------------------------------------------------------------------------------


async def test_data_handling_editorial_workflow(store: InMemoryEventStore, read_log: Any) -> None:
    """Run editorial_workflow (``seed_003_flows.editorial``).

    Adaptation: draft_agent, an LLM agent, is a function node.
    """

    @node
    def draft_agent(node_input: str) -> str:
        return f"draft about {node_input}"

    runner = Runner(seed_003_flows.editorial(draft_agent), store=store)
    result = await runner.run("otters")

    assert result.output == "Draft About Otters"
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/editorial_workflow@1/draft_agent@1"] == "draft about otters"
    assert runs(log, "wf@1/editorial_workflow@1/format_function_node@1") == 1


@node
def city_report_agent(node_input: CityTime) -> str:
    return f"It is {node_input.time_info} in {node_input.city}."


async def test_data_handling_city_workflow_with_schemas(store: InMemoryEventStore, read_log: Any) -> None:
    """Run city_workflow with the CityTime schema (``seed_003_flows.city_report``).

    Adaptation: city_report_agent, an LLM agent with input_schema=CityTime, is a function node taking CityTime.
    """
    runner = Runner(seed_003_flows.city_report(city_report_agent), store=store)
    result = await runner.run()

    assert result.output == "It is 10:10 AM in Paris."
    log = await read_log(runner, result.session_id)
    assert log.outputs()["wf@1/city_workflow@1/city_time_function@1"] == {
        "time_info": "10:10 AM",
        "city": "Paris",
    }
    assert dynamic_paths(log, "wf@1/city_workflow@1") == [
        "wf@1/city_workflow@1/city_time_function@1",
        "wf@1/city_workflow@1/city_report_agent@1",
    ]


# -- Workflow routes: sequence ------------------------------------------------------------------


async def test_sequence_route(store: InMemoryEventStore, read_log: Any) -> None:
    """Run the sequence-route city_workflow.

    Adaptation: city_generator_agent and city_report_agent, LLM agents, are function nodes.
    Adaptation: city_workflow calls run_node, so it is declared with rerun_on_resume=True.
    """

    @node
    def city_generator_agent(node_input: Any) -> str:
        return "Lisbon"

    @node(rerun_on_resume=True)  # workflow node
    async def city_workflow(ctx: Context):
        city = await ctx.run_node(city_generator_agent)
        city_time = await ctx.run_node(city_time_function, city)
        report_text = await ctx.run_node(city_report_agent, city_time)

        return report_text

    runner = Runner(Workflow(name="wf", edges=[("START", city_workflow)]), store=store)
    result = await runner.run()

    assert result.output == "It is 10:10 AM in Lisbon."
    log = await read_log(runner, result.session_id)
    assert dynamic_paths(log, "wf@1/city_workflow@1") == [
        "wf@1/city_workflow@1/city_generator_agent@1",
        "wf@1/city_workflow@1/city_time_function@1",
        "wf@1/city_workflow@1/city_report_agent@1",
    ]


# -- Workflow routes: loop ----------------------------------------------------------------------


@node(name="generator_agent")
def coder_agent(node_input: str) -> str:
    return f"# {node_input}\nimport os\nprint('hi')"


@node(name="fixer_agent")
def fixer_agent(node_input: dict[str, str]) -> str:
    return (
        node_input["code"].replace("import os\n", "", 1)
        if "import os" in node_input["code"]
        else node_input["code"] + "\n# fixed"
    )


async def test_loop_route_without_findings(store: InMemoryEventStore, read_log: Any) -> None:
    """Run code_workflow (``seed_003_flows.code_loop``) with the seed's lint check, which never finds anything.

    Adaptation: coder_agent and fixer_agent, LLM agents, are function nodes.
    """
    runner = Runner(seed_003_flows.code_loop(coder_agent, fixer_agent, lambda code: ""), store=store)
    result = await runner.run("say hi")

    assert result.output == "# say hi\nimport os\nprint('hi')"
    log = await read_log(runner, result.session_id)
    assert dynamic_paths(log, "wf@1/code_workflow@1") == [
        "wf@1/code_workflow@1/generator_agent@1",
        "wf@1/code_workflow@1/lint_reviewer@1",
    ]
    assert log.of_kind("state") == []


async def test_loop_route_fixes_until_the_lint_check_is_clean(
    store: InMemoryEventStore, read_log: Any
) -> None:
    """Run code_workflow with a simulated lint check that finds two problems, one per round.

    Adaptation: coder_agent and fixer_agent, LLM agents, are function nodes.
    """
    runner = Runner(
        seed_003_flows.code_loop(coder_agent, fixer_agent, seed_003_flows.two_findings), store=store
    )
    result = await runner.run("say hi")

    assert result.output == "# say hi\nprint('hi')\n# fixed"
    log = await read_log(runner, result.session_id)
    assert dynamic_paths(log, "wf@1/code_workflow@1") == [
        "wf@1/code_workflow@1/generator_agent@1",
        "wf@1/code_workflow@1/lint_reviewer@1",
        "wf@1/code_workflow@1/fixer_agent@1",
        "wf@1/code_workflow@1/lint_reviewer@2",
        "wf@1/code_workflow@1/fixer_agent@2",
        "wf@1/code_workflow@1/lint_reviewer@3",
    ]
    assert [(e.node_path, e.state["findings"]) for e in log.of_kind("state")] == [
        ("wf@1/code_workflow@1", "unused import os"),
        ("wf@1/code_workflow@1", "no trailing comment"),
    ]
    assert log.outputs()["wf@1/code_workflow@1/lint_reviewer@3"] == {"findings": ""}


# -- Workflow routes: parallel ------------------------------------------------------------------


def supervisor_workflow(real_node: BaseNode) -> Workflow:
    @node(rerun_on_resume=True)
    async def parallel_supervisor(ctx: Context, node_input: list[Any]):
        """Runs a worker node in parallel for each item in the input list."""
        tasks = []
        for item in node_input:
            # ctx.run_node returns a future. Append instead of awaiting immediately.
            tasks.append(ctx.run_node(real_node, item))

        # Collect all results in parallel
        results = await asyncio.gather(*tasks)
        return results

    return Workflow(name="wf", edges=[("START", parallel_supervisor)])


async def test_parallel_supervisor(store: InMemoryEventStore, read_log: Any) -> None:
    """Run parallel_supervisor over four items.

    Adaptation: parallel_supervisor gets its worker from a closure, not from state.
    """

    @node
    async def worker(node_input: int) -> int:
        await asyncio.sleep((4 - node_input) * 0.002)
        return node_input * node_input

    runner = Runner(supervisor_workflow(worker), store=store)
    result = await runner.run([1, 2, 3, 4])

    assert result.output == [1, 4, 9, 16]
    log = await read_log(runner, result.session_id)
    assert sorted(dynamic_paths(log, "wf@1/parallel_supervisor@1")) == [
        f"wf@1/parallel_supervisor@1/worker@{k}" for k in range(1, 5)
    ]
    assert log.outputs()["wf@1/parallel_supervisor@1/worker@3"] == 9


async def test_parallel_supervisor_resume_re_executes_only_interrupted_workers(
    store: InMemoryEventStore, read_log: Any
) -> None:
    """Resume parallel_supervisor after two of four workers interrupt (the seed's resuming tip).

    Adaptation: parallel_supervisor gets its worker from a closure, not from state.
    """

    @node(rerun_on_resume=True)
    async def worker(ctx: Context, node_input: int):
        if node_input % 2 == 0:
            yield node_input
        elif f"item-{node_input}" in ctx.resume_inputs:
            yield ctx.resume_inputs[f"item-{node_input}"]
        else:
            yield RequestInput(message=f"value for {node_input}?", interrupt_id=f"item-{node_input}")

    runner = Runner(supervisor_workflow(worker), store=store)
    first = await runner.run([1, 2, 3, 4])
    assert sorted(i.id for i in first.interrupts) == ["item-1", "item-3"]
    await runner.resume(first.session_id, {"item-3": 30})
    result = await runner.resume(first.session_id, {"item-1": 10})

    assert result.output == [10, 2, 30, 4]
    log = await read_log(runner, first.session_id)
    base = "wf@1/parallel_supervisor@1"
    assert runs(log, base) == 3
    assert [runs(log, f"{base}/worker@{k}") for k in range(1, 5)] == [2, 1, 2, 1]


# -- Human input --------------------------------------------------------------------------------


@node(rerun_on_resume=False)
async def get_user_approval(ctx: Context, node_input: Any):
    """Yields a RequestInput to pause the workflow and wait for user input."""
    yield RequestInput(message="Please approve this request (Yes/No)")


@node(rerun_on_resume=True)
async def handle_process(ctx: Context, node_input: Any):
    """The orchestrator calling the interactive step."""
    user_response = await ctx.run_node(get_user_approval)

    if user_response.lower() == "yes":
        return "Approved"
    return "Denied"


async def test_human_input(store: InMemoryEventStore, read_log: Any) -> None:
    """Run handle_process and answer its approval request both ways (no adaptations)."""
    runner = Runner(Workflow(name="wf", edges=[("START", handle_process)]), store=store)
    for answer, expected in (("Yes", "Approved"), ("no", "Denied")):
        first = await runner.run()
        assert first.status == "waiting"
        (interrupt,) = first.interrupts
        assert interrupt.node_path == "wf@1/handle_process@1/get_user_approval@1"
        assert interrupt.message == "Please approve this request (Yes/No)"

        result = await runner.resume(first.session_id, {interrupt.id: answer})

        assert result.output == expected
        log = await read_log(runner, first.session_id)
        assert runs(log, "wf@1/handle_process@1") == 2
        assert runs(log, "wf@1/handle_process@1/get_user_approval@1") == 1
        assert "wf@1/handle_process@1/get_user_approval@1" not in log.outputs()  # as in ADK


# -- Advanced features: custom execution IDs ----------------------------------------------------


class Product(BaseModel):
    sku: str
    quantity: int


class Order(BaseModel):
    order_id: str
    cart_items: list[Product]


async def get_orders() -> list[Order]:
    return [
        Order(order_id="A7", cart_items=[Product(sku="tea", quantity=2)]),
        Order(order_id="B8", cart_items=[Product(sku="cup", quantity=1), Product(sku="pot", quantity=1)]),
    ]


@node
def process_order(node_input: Order) -> str:
    return f"{node_input.order_id}: {sum(p.quantity for p in node_input.cart_items)} items"


@node(rerun_on_resume=True)
async def process_all_orders(ctx: Context, node_input: Any):
    orders = await get_orders()

    process_tasks = []
    for order in orders:
        # Use run_id to provide a custom identifier.
        # Custom run_ids must contain at least one non-numeric character
        # to avoid collision with auto-generated sequential numeric IDs.
        task = ctx.run_node(process_order, order, run_id=f"order-{order.order_id}")
        process_tasks.append(task)

    results = await asyncio.gather(*process_tasks)
    return results


async def test_custom_execution_ids(store: InMemoryEventStore, read_log: Any) -> None:
    """Run process_all_orders with custom run ids.

    Adaptation: get_orders, Product and process_order, which the seed does not define, are defined here.
    """
    runner = Runner(Workflow(name="wf", edges=[("START", process_all_orders)]), store=store)
    result = await runner.run()

    assert result.output == ["A7: 2 items", "B8: 2 items"]
    log = await read_log(runner, result.session_id)
    assert dynamic_paths(log, "wf@1/process_all_orders@1") == [
        "wf@1/process_all_orders@1/process_order@order-A7",
        "wf@1/process_all_orders@1/process_order@order-B8",
    ]
