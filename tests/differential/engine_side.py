"""Run scenarios on ``engine`` and observe each turn as ``adk_side`` does on google-adk."""

from __future__ import annotations

from collections import Counter
from types import SimpleNamespace
from typing import Any

from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import engine
from engine import DynamicNodeFailError, Runner

from .observe import turn
from .scenarios import Scenario, Turn


def scripted(name: str, calls: Counter[str], turns: list[Turn]) -> FunctionModel:
    """A pydantic-ai model playing ``turns`` in order, counting its calls as ``calls[name]``."""

    def play(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        calls[name] += 1
        turn = turns[calls[name] - 1]
        if turn[0] == "call":
            return ModelResponse(parts=[ToolCallPart(turn[1], turn[2])])
        last = str(getattr(messages[-1].parts[-1], "content", ""))
        return ModelResponse(parts=[TextPart(turn[1].format(last=last))])

    return FunctionModel(play, model_name=name)


API = SimpleNamespace(
    Agent=engine.LlmAgent,
    scripted=scripted,
    DEFAULT_ROUTE=engine.DEFAULT_ROUTE,
    START=engine.START,
    BaseNode=engine.BaseNode,
    Context=engine.Context,
    DynamicNodeFailError=DynamicNodeFailError,
    Edge=engine.Edge,
    Event=engine.Event,
    FunctionNode=engine.FunctionNode,
    JoinNode=engine.JoinNode,
    RequestInput=engine.RequestInput,
    RetryConfig=engine.RetryConfig,
    Workflow=engine.Workflow,
    node=engine.node,
)


async def run(scenario: Scenario, calls: Counter[str]) -> list[dict[str, Any]]:
    runner = Runner(scenario.workflow)
    root = f"{scenario.workflow.name}@1"
    turns = []
    state: dict[str, Any] = {}
    seen = 0
    session_id = ""
    for number in range(len(scenario.answers) + 1):
        before = Counter(calls)
        if number == 0:
            result = await runner.run(scenario.input)
            session_id = result.session_id
        else:
            result = await runner.resume(session_id, scenario.answers[number - 1])
        events = await runner.store.list_events(session_id, after_seq=seen)
        seen = events[-1].seq if events else seen
        outputs: dict[str, Any] = {}
        routes: list[tuple[str, Any]] = []
        for event in events:
            if event.state:
                state.update(event.state)
            if event.kind in ("output", "completed") and event.output is not None:
                if event.node_path != root and (
                    scenario.observe is None or event.node_path in scenario.observe
                ):
                    outputs[event.node_path] = event.output
            if event.kind in ("output", "completed", "route") and event.route is not None:
                routes.append((event.node_path, event.route))
        turns.append(
            turn(
                status=result.status,
                output=result.output,
                pending=[interrupt.id for interrupt in result.interrupts],
                asked=[e.interrupt.id for e in events if e.kind == "interrupt" and e.interrupt is not None],
                state=state,
                outputs=outputs,
                routes=routes,
                calls=dict(Counter(calls) - before),
                error=result.error_type,
            )
        )
        if result.status == "failed":
            break
    return turns
