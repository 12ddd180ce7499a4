"""Scripted models for agent tests: a ``FunctionModel`` that plays given turns and counts calls."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_ai import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

Turn = ModelResponse | Callable[[list[ModelMessage], AgentInfo], ModelResponse]


def text(content: str) -> ModelResponse:
    return ModelResponse(parts=[TextPart(content)])


def call(tool: str, arguments: dict[str, Any], call_id: str | None = None) -> ModelResponse:
    part = ToolCallPart(tool, arguments) if call_id is None else ToolCallPart(tool, arguments, call_id)
    return ModelResponse(parts=[part])


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
