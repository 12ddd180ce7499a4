"""An agent loop run in a subprocess that is killed mid-conversation.

``python agent_app.py <log.json>`` starts a run of ``workflow`` whose store writes the whole
log to ``log.json`` after every append. The scripted model answers two tool-calling steps
and then hangs on the third request (first writing ``log.asked``: a step in flight leaves
nothing in the log), so the test can kill the process there.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from engine import START, Event, InMemoryEventStore, LlmAgent, Runner, Workflow

TOOL_RUNS: list[str] = []


def stock(item: str) -> int:
    """How many of an item are in stock."""
    TOOL_RUNS.append(item)
    return {"apples": 3, "pears": 5}[item]


def planner(model: FunctionModel) -> Workflow:
    agent = LlmAgent(name="planner", model=model, instruction="Count the fruit.", tools=[stock])
    return Workflow(name="fruit", edges=[(START, agent)])


def scripted(hang: bool, asked: Path | None = None) -> FunctionModel:
    """Two tool calls, then the answer (or, in the doomed process, a request that never returns,
    announced by writing the file ``asked``)."""

    async def answer(messages: list[Any], info: Any) -> ModelResponse:
        steps = sum(1 for m in messages if m.kind == "response")
        if steps == 0:
            return ModelResponse(parts=[ToolCallPart("stock", {"item": "apples"}, "c1")])
        if steps == 1:
            return ModelResponse(parts=[ToolCallPart("stock", {"item": "pears"}, "c2")])
        if hang:
            if asked is not None:
                asked.write_text("the third request")
            await asyncio.sleep(3600)
        return ModelResponse(parts=[TextPart("8 fruit")])

    return FunctionModel(answer, model_name="scripted")


class FileBackedStore(InMemoryEventStore):
    """Writes the session's whole log to a file after every append (atomically)."""

    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        last = await super().append(session_id, events, expected_seq=expected_seq)
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps(self.dump(session_id)))
        partial.replace(self.path)
        return last


async def _main(path: Path) -> None:
    model = scripted(hang=True, asked=path.with_suffix(".asked"))
    await Runner(planner(model), store=FileBackedStore(path)).run("count apples and pears")


if __name__ == "__main__":
    asyncio.run(_main(Path(sys.argv[1])))
