"""Changing an agent after construction takes effect or is refused (issue 26.3); a runner or the
environment swaps an agent's model without editing it (issue 26.6)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel
from pydantic_ai import ModelMessage
from pydantic_ai.models.function import AgentInfo

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow
from engine.agents import AgentConfigurationError

from .scripts import Script, call, text


def lookup(order_id: str) -> str:
    """Look an order up."""
    return f"order {order_id}: a kettle"


class Verdict(BaseModel):
    ok: bool


async def test_a_new_model_set_after_construction_is_used() -> None:
    first, second = Script(text("from the first")), Script(text("from the second"))
    agent = LlmAgent(name="helper", model=first.model, instruction="Help.")
    flow = Workflow(name="wf", edges=[(START, agent)])
    assert (await Runner(flow).run("hi")).output == "from the first"

    agent.model = second.model
    assert (await Runner(flow).run("hi")).output == "from the second"
    assert (first.calls, second.calls) == (1, 1)


async def test_tools_added_in_place_and_a_new_output_schema_take_effect() -> None:
    offered: list[list[str]] = []

    def answer(messages: list[ModelMessage], info: AgentInfo) -> Any:
        offered.append(sorted(t.name for t in (*info.function_tools, *info.output_tools)))
        return call("final_result", {"ok": True})

    script = Script(answer)
    agent = LlmAgent(name="helper", model=script.model, instruction="Help.")
    agent.tools.append(lookup)
    agent.output_schema = Verdict
    done = await Runner(Workflow(name="wf", edges=[(START, agent)])).run("hi")
    assert done.status == "completed", done.error
    assert done.output == Verdict(ok=True)
    assert offered == [["final_result", "lookup"]]


def test_a_new_name_is_refused() -> None:
    agent = LlmAgent(name="helper", model="test")
    with pytest.raises(AgentConfigurationError, match="name cannot change"):
        agent.name = "other"


def test_a_bad_model_set_later_is_refused_at_once() -> None:
    agent = LlmAgent(name="helper", model="test")
    with pytest.raises(AgentConfigurationError, match="model"):
        agent.model = 42


async def test_a_runner_swaps_an_agents_model_by_name_or_for_all() -> None:
    own, swapped, every = Script(text("own")), Script(text("swapped")), Script(text("every"))
    agent = LlmAgent(name="helper", model=own.model, instruction="Help.")
    flow = Workflow(name="wf", edges=[(START, agent)])

    assert (await Runner(flow, models={"helper": swapped.model}).run("hi")).output == "swapped"
    assert (await Runner(flow, models={"*": every.model}).run("hi")).output == "every"
    assert (await Runner(flow, models={"other": every.model}).run("hi")).output == "own"
    assert (own.calls, swapped.calls, every.calls) == (1, 1, 1)


async def test_a_swapped_model_is_not_asked_again_on_resume() -> None:
    script = Script(call("lookup_approved", {"order_id": "A1"}), text("done"))
    from engine import tool

    @tool(requires_approval=True)
    def lookup_approved(order_id: str) -> str:
        """Look an order up."""
        return "a kettle"

    agent = LlmAgent(name="helper", model="test", instruction="Help.", tools=[lookup_approved])
    runner = Runner(
        Workflow(name="wf", edges=[(START, agent)]), store=InMemoryEventStore(), models={"*": script.model}
    )
    waiting = await runner.run("hi")
    assert waiting.status == "waiting", waiting.error
    done = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: {"approved": True}})
    assert done.output == "done"
    assert script.calls == 2  # the recorded first step was replayed, not asked again


async def test_the_environment_swaps_models_without_a_runner_argument(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = Script(text("own"))
    agent = LlmAgent(name="helper", model=script.model, instruction="Help.")
    monkeypatch.setenv("ENGINE_AGENT_MODELS", '{"*": "test"}')
    done = await Runner(Workflow(name="wf", edges=[(START, agent)])).run("hi")
    assert done.status == "completed", done.error
    assert script.calls == 0  # pydantic-ai's offline TestModel answered
