"""Issue 25, item 9: how a function node's parameters are bound (ADK's rule, and the seeds' style)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine import START, Context, Event, FunctionNode, Runner, Workflow, node


async def test_parameters_other_than_ctx_and_node_input_come_from_state() -> None:
    @node
    def setup(node_input: Any) -> Event:
        return Event(output="x", state={"count": "3", "label": "n"})

    @node
    def use(ctx: Context, node_input: str, count: int, label: str, unit: str = "each") -> str:
        return f"{node_input}:{count + 1}{label} {unit}"

    result = await Runner(Workflow(name="wf", edges=[(START, setup, use)])).run(None)
    assert result.output == "x:4n each"  # "3" validated into its annotation, int


async def test_two_required_parameters_without_node_input_both_come_from_state() -> None:
    @node
    def setup(node_input: Any) -> Event:
        return Event(output="ignored", state={"a": 1, "b": 2})

    @node
    def add(a: int, b: int) -> int:
        return a + b

    assert (await Runner(Workflow(name="wf", edges=[(START, setup, add)])).run(None)).output == 3


async def test_a_missing_state_parameter_is_a_value_error() -> None:
    @node
    def needs(node_input: Any, count: int) -> int:
        return count

    caught: list[str] = []

    @node(rerun_on_resume=True)
    async def parent(ctx: Context, node_input: Any) -> str:
        try:
            await ctx.run_node(needs, 1)
        except ValueError as error:
            caught.append(str(error))
        return "went on"

    assert (await Runner(Workflow(name="wf", edges=[(START, parent)])).run(None)).output == "went on"
    assert "count" in caught[0]


async def test_a_state_value_of_the_wrong_type_is_a_value_error() -> None:
    @node
    def setup(node_input: Any) -> Event:
        return Event(output="x", state={"count": "many"})

    @node
    def use(node_input: Any, count: int) -> int:
        return count

    result = await Runner(Workflow(name="wf", edges=[(START, setup, use)])).run(None)
    assert result.status == "failed" and result.error_type == "WorkflowDataError"


async def test_the_seeds_style_names_the_input_otherwise_even_with_a_state_key_of_that_name() -> None:
    @node
    def setup(node_input: Any) -> Event:
        return Event(output="Oslo", state={"city": "stale"})

    @node
    def lookup(city: str) -> str:
        return f"time in {city}"

    assert (
        await Runner(Workflow(name="wf", edges=[(START, setup, lookup)])).run(None)
    ).output == "time in Oslo"


class Query(BaseModel):
    city: str
    units: str = "metric"


async def test_parameter_binding_node_input_binds_the_inputs_fields() -> None:
    def weather(city: str, units: str = "metric", days: int = 1) -> str:
        return f"{city}/{units}/{days}"

    by_fields = FunctionNode(weather, parameter_binding="node_input")
    copied = by_fields.model_copy(update={"name": "weather_copy"})
    assert copied.parameter_binding == "node_input"

    @node
    def as_dict(node_input: Any) -> dict[str, Any]:
        return {"city": "Oslo", "days": "3"}

    result = await Runner(Workflow(name="wf", edges=[(START, as_dict, by_fields)])).run(None)
    assert result.output == "Oslo/metric/3"

    @node
    def as_model(node_input: Any) -> Query:
        return Query(city="Rome", units="imperial")

    @node(rerun_on_resume=True)
    async def parent(ctx: Context, node_input: Any) -> list[Any]:
        got = [await ctx.run_node(by_fields, Query(city="Rome", units="imperial"))]
        try:
            await ctx.run_node(by_fields, {"units": "metric"})
        except ValueError as error:
            got.append("city" in str(error))
        return got

    assert (await Runner(Workflow(name="wf", edges=[(START, parent)])).run(None)).output == [
        "Rome/imperial/1",
        True,
    ]


def test_node_takes_parameter_binding() -> None:
    @node(parameter_binding="node_input")
    def weather(city: str) -> str:
        return city

    assert weather.parameter_binding == "node_input"
    assert node(weather, name="w2").parameter_binding == "node_input"
