"""The agent workload: one agent conversation of ``steps`` model steps, each calling a tool.

The same ``FunctionModel`` script drives bare pydantic-ai (``Agent.run``) and our
``LlmAgent`` node in a one-node workflow on the in-memory store, so the difference is what
our node adds per model step: recording each response and tool call as child steps in the
log (in memory, or on the Django store). Both answer every step at once (no network, no model
time).
"""

from __future__ import annotations

from typing import Any

from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


def script(steps: int) -> FunctionModel:
    """``steps - 1`` tool-calling steps, then the answer (async: no thread hop per request)."""

    async def answer(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        done = sum(1 for m in messages if m.kind == "response")
        if done < steps - 1:
            return ModelResponse(parts=[ToolCallPart("add", {"a": done, "b": 1})])
        return ModelResponse(parts=[TextPart(f"{done} additions")])

    return FunctionModel(answer, model_name="bench")


def bare(steps: int) -> Any:
    """A run of bare pydantic-ai: ``await run()`` returns the answer."""
    agent = PydanticAgent(script(steps), tools=[add], instructions="Add.")

    async def run() -> Any:
        return (await agent.run("go")).output

    return run


def ours(steps: int, store: Any = None) -> Any:
    """A run of our agent node in a one-node workflow (on ``store``, else a fresh in-memory one)."""
    workflow = Workflow(
        name="bench",
        edges=[(START, LlmAgent(name="adder", model=script(steps), tools=[add], instruction="Add."))],
    )

    async def run() -> Any:
        result = await Runner(workflow, store=store or InMemoryEventStore()).run("go")
        assert result.status == "completed", result.error
        return result.output

    return run
