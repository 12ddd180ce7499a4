"""Scripted models for agent tests: ``FunctionModel``s that play given turns (whole or streamed) and count calls."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic_ai import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel

from engine import START, Workflow

Turn = ModelResponse | Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def text(content: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content)])


def call(tool: str, arguments: dict[str, Any], call_id: str | None = None) -> ModelResponse:
    part = ToolCallPart(tool, arguments) if call_id is None else ToolCallPart(tool, arguments, call_id)
    return ModelResponse(parts=[part])


def alone(agent: Any) -> Workflow:
    """A workflow of just ``agent``, after START."""
    return Workflow(name="wf", edges=[(START, agent)])


class Script:
    """Answers model requests with ``turns`` in order; records what each request said."""

    def __init__(self, *turns: Turn, name: str = "scripted") -> None:
        self.turns = list(turns)
        self.requests: list[list[ModelMessage]] = []
        self.instructions: list[str | None] = []
        self.model = FunctionModel(self._answer, model_name=name)

    @property
    def calls(self) -> int:
        return len(self.requests)

    def _answer(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        self.instructions.append(info.instructions)
        if len(self.requests) > len(self.turns):
            raise AssertionError(f"the script has {len(self.turns)} turns; request {len(self.requests)} came")
        turn = self.turns[len(self.requests) - 1]
        return turn if isinstance(turn, ModelResponse) else turn(messages, info)

    def last_parts(self, number: int) -> list[Any]:
        """The parts of the newest message of request ``number`` (1-based)."""
        last = self.requests[number - 1][-1]
        assert isinstance(last, ModelRequest)
        return list(last.parts)


def part_texts(parts: list[Any]) -> list[str]:
    """Each part's content as text (tool returns, user prompts, retry notes)."""
    return [str(getattr(part, "content", "")) for part in parts]


class StreamScript:
    """A model that only streams: each request streams the next turn's text in the given pieces.

    A turn is a list of text pieces, or a ``ToolCallPart`` dict ``{tool_name: args}``.
    ``gate``, when set, is awaited before each piece after the first (a test holds the stream open).
    """

    def __init__(self, *turns: list[str] | dict[str, dict[str, Any]], name: str = "streaming") -> None:
        self.turns = list(turns)
        self.calls = 0
        self.gate: Callable[[], Any] | None = None
        self.model = FunctionModel(stream_function=self._stream, model_name=name)

    async def _stream(self, messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
        self.calls += 1
        if self.calls > len(self.turns):
            raise AssertionError(f"the script has {len(self.turns)} turns; request {self.calls} came")
        turn = self.turns[self.calls - 1]
        if isinstance(turn, dict):
            yield {
                number: DeltaToolCall(name=name, json_args=json.dumps(args))
                for number, (name, args) in enumerate(turn.items())
            }
            return
        for number, piece in enumerate(turn):
            if number and self.gate is not None:
                await self.gate()
            yield piece
