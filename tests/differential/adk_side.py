"""Run scenarios on google-adk 2.13 and print what each turn showed, as JSON.

Run with google-adk's interpreter (``adk_env``), from the repository's root:
``<adk python> -m tests.differential.adk_side [NAME ...]``. It prints one JSON object,
scenario name -> list of turn observations (or ``{"build_error": ...}``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import Counter
from collections.abc import AsyncGenerator
from types import SimpleNamespace
from typing import Any

from google.adk import Agent, Context, Event
from google.adk.events import RequestInput
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.workflow import (
    DEFAULT_ROUTE,
    START,
    BaseNode,
    Edge,
    FunctionNode,
    JoinNode,
    RetryConfig,
    Workflow,
    node,
)
from google.adk.workflow._errors import DynamicNodeFailError
from google.genai import types

from .observe import build_error, turn
from .scenarios import SCENARIOS, Scenario, Turn


class Scripted(BaseLlm):
    """An ADK model playing scripted turns in order, counting its calls."""

    turns: list[Any]
    counter: Any
    agent: str

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.counter[self.agent] += 1
        turn = self.turns[self.counter[self.agent] - 1]
        if turn[0] == "call":
            part = types.Part(function_call=types.FunctionCall(name=turn[1], args=turn[2]))
        else:
            part = types.Part(text=turn[1].format(last=_last_text(llm_request)))
        yield LlmResponse(content=types.Content(role="model", parts=[part]))


def _last_text(request: LlmRequest) -> str:
    last = request.contents[-1].parts[-1] if request.contents and request.contents[-1].parts else None
    if last is None:
        return ""
    if last.function_response is not None:
        response = last.function_response.response or {}
        return str(response.get("result", response))
    return last.text or ""


def _output(event: Event) -> Any:
    """The event's output; an agent's text answer is its message (``message_as_output``)."""
    info = event.node_info
    if event.output is None and info and info.message_as_output and event.content and event.content.parts:
        return "".join(part.text for part in event.content.parts if part.text and not part.thought)
    return event.output


def scripted(name: str, calls: Counter[str], turns: list[Turn]) -> Scripted:
    return Scripted(model=name, turns=turns, counter=calls, agent=name)


API = SimpleNamespace(
    Agent=Agent,
    scripted=scripted,
    DEFAULT_ROUTE=DEFAULT_ROUTE,
    START=START,
    BaseNode=BaseNode,
    Context=Context,
    DynamicNodeFailError=DynamicNodeFailError,
    Edge=Edge,
    Event=Event,
    FunctionNode=FunctionNode,
    JoinNode=JoinNode,
    RequestInput=RequestInput,
    RetryConfig=RetryConfig,
    Workflow=Workflow,
    node=node,
)


def _message(scenario: Scenario) -> types.Content:
    text = scenario.input if isinstance(scenario.input, str) else json.dumps(scenario.input)
    return types.Content(role="user", parts=[types.Part(text=text)])


def _answers(answers: dict[str, Any]) -> types.Content:
    parts = [
        types.Part(
            function_response=types.FunctionResponse(
                id=interrupt_id, name="adk_request_input", response={"result": value}
            )
        )
        for interrupt_id, value in answers.items()
    ]
    return types.Content(role="user", parts=parts)


async def run(scenario: Scenario, calls: Counter[str]) -> list[dict[str, Any]]:
    workflow = scenario.workflow
    service = InMemorySessionService()
    runner = Runner(node=workflow, app_name="diff", session_service=service)
    session = await service.create_session(app_name="diff", user_id="u")
    root = f"{workflow.name}@1"
    pending: set[str] = set()
    turns = []
    messages = [_message(scenario), *(_answers(a) for a in scenario.answers)]
    for number, message in enumerate(messages):
        if number:
            pending.difference_update(scenario.answers[number - 1])
        output: Any = None
        outputs: dict[str, Any] = {}
        routes: list[tuple[str, Any]] = []
        asked: list[str] = []
        error: str | None = None
        before = Counter(calls)
        try:
            async for event in runner.run_async(user_id="u", session_id=session.id, new_message=message):
                info = event.node_info
                path = info.path if info else ""
                if event.long_running_tool_ids:
                    pending.update(event.long_running_tool_ids)
                    asked.extend(event.long_running_tool_ids)
                value = _output(event)
                if value is not None and (scenario.observe is None or path in scenario.observe):
                    outputs[path] = value
                    if info and root in (info.output_for or []):
                        output = value
                if event.actions and event.actions.route is not None:
                    routes.append((path, event.actions.route))
        except Exception as exc:  # the node's error, re-raised once the stream drained
            error = type(exc).__name__
        stored = await service.get_session(app_name="diff", user_id="u", session_id=session.id)
        status = "failed" if error else ("waiting" if pending else "completed")
        turns.append(
            turn(
                status=status,
                output=output,
                pending=sorted(pending),
                asked=asked,
                state=dict(stored.state) if stored else {},
                outputs=outputs,
                routes=routes,
                calls=dict(Counter(calls) - before),
                error=error,
            )
        )
        if error:
            break
    return turns


def main(names: list[str]) -> None:
    results: dict[str, Any] = {}
    for name in names or list(SCENARIOS):
        calls: Counter[str] = Counter()
        try:
            scenario = SCENARIOS[name](API, calls)
        except Exception as exc:
            results[name] = build_error(exc)
            continue
        results[name] = asyncio.run(run(scenario, calls))
    json.dump(results, sys.stdout)


if __name__ == "__main__":
    main(sys.argv[1:])
