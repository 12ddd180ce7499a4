"""Agents and tools in every place a node goes: Edge objects, routing maps, custom BaseTools."""

from __future__ import annotations

from typing import Any

from engine import START, BaseTool, Edge, Event, InMemoryEventStore, LlmAgent, Runner, Workflow, node

from .scripts import Script, text


async def test_agents_in_edge_objects_and_routing_maps(store: InMemoryEventStore) -> None:
    happy = LlmAgent(name="happy", model=Script(text("Glad to hear it!"), text("Glad to hear it!")).model)
    sorry = LlmAgent(name="sorry", model=Script(text("So sorry.")).model)

    @node
    def mood(node_input: str) -> Any:
        return Event(output=node_input, route="good" if "love" in node_input else "bad")

    routed = Workflow(name="routed", edges=[(START, mood, {"good": happy, "bad": sorry})])
    assert (await Runner(routed, store=store).run("I love it")).output == "Glad to hear it!"
    assert (await Runner(routed, store=store).run("It broke")).output == "So sorry."

    explicit = Workflow(name="explicit", edges=[Edge(from_node=START, to_node=happy)])
    assert (await Runner(explicit, store=store).run("hi")).output == "Glad to hear it!"


class Multiply(BaseTool):
    """A tool written as a class: its schema and its code."""

    @property
    def parameters(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
        }

    async def run(self, arguments: dict[str, Any]) -> Any:
        return arguments["a"] * arguments["b"]


async def test_a_base_tool_serves_an_agent_and_a_graph(store: InMemoryEventStore) -> None:
    from .scripts import call

    multiply = Multiply(name="multiply", description="Multiply two integers.")
    script = Script(call("multiply", {"a": 6, "b": 7}), lambda m, i: text(f"It is {m[-1].parts[0].content}."))
    agent = LlmAgent(name="calc", model=script.model, tools=[multiply])
    result = await Runner(Workflow(name="wf", edges=[(START, agent)]), store=store).run("6 times 7?")
    assert result.output == "It is 42."

    as_node = await Runner(Workflow(name="g", edges=[(START, multiply)]), store=store).run({"a": 3, "b": 4})
    assert as_node.output == 12


async def test_one_agent_runs_concurrently_for_several_inputs(store: InMemoryEventStore) -> None:
    import asyncio

    from engine import Context

    def echo(messages: Any, info: Any) -> Any:
        return text(f"about {messages[-1].parts[-1].content}")

    writer = LlmAgent(name="writer", model=Script(echo, echo, echo).model)

    @node(rerun_on_resume=True)
    async def fan(ctx: Context, node_input: list[str]) -> list[str]:
        return list(await asyncio.gather(*(ctx.run_node(writer, topic) for topic in node_input)))

    result = await Runner(Workflow(name="wf", edges=[(START, fan)]), store=store).run(["a", "b", "c"])
    assert result.output == ["about a", "about b", "about c"]
