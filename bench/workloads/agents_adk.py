"""The agent workload on google-adk 2.13: an ``LlmAgent`` in a ``Workflow``, on a stub model.

The stub (a custom ``BaseLlm``, as ADK allows) answers like ``workloads/agents.script``:
``steps - 1`` steps that each call the ``add`` tool, then the answer, each at once (no network,
no model time). What a run costs is what ADK adds per model step: its LLM flow, the tool call,
the events and the in-memory session. Runs in ``bench/.peers-venv``:

    bench/.peers-venv/bin/python -m bench.workloads.agents_adk --steps 10 --runs 50
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import AsyncGenerator
from typing import Any

from google.adk import Workflow
from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.adk.workflow import START
from google.genai import types

from bench.common import Clock

APP, USER = "bench", "u"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


class StubLlm(BaseLlm):
    """Answers at once: a call of ``add`` per step until the last, which answers in text."""

    steps: int = 10

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        done = sum(1 for c in llm_request.contents if c.role == "model")
        if done < self.steps - 1:
            part = types.Part(function_call=types.FunctionCall(name="add", args={"a": done, "b": 1}))
        else:
            part = types.Part(text=f"{done} additions")
        usage = types.GenerateContentResponseUsageMetadata(
            prompt_token_count=1, candidates_token_count=1, total_token_count=2
        )
        yield LlmResponse(content=types.Content(role="model", parts=[part]), usage_metadata=usage)


def build(steps: int) -> Workflow:
    agent = LlmAgent(name="adder", model=StubLlm(model="stub", steps=steps), instruction="Add.", tools=[add])
    return Workflow(name="bench", edges=[(START, agent)])


async def one_run(runner: Runner, sessions: InMemorySessionService) -> tuple[str, int]:
    """A run: its final text and the model steps taken."""
    session = await sessions.create_session(app_name=APP, user_id=USER)
    message = types.Content(role="user", parts=[types.Part(text="go")])
    text, steps = "", 0
    async for event in runner.run_async(user_id=USER, session_id=session.id, new_message=message):
        if event.author == "adder" and event.content and event.content.parts:
            steps += any(p.function_call or p.text for p in event.content.parts)
            text = next((p.text for p in event.content.parts if p.text), text)
    return text, steps


async def measure(steps: int, runs: int) -> dict[str, Any]:
    sessions = InMemorySessionService()
    runner = Runner(node=build(steps), app_name=APP, session_service=sessions)
    samples, cpu = [], []
    for number in range(max(runs // 10, 3) + runs):
        clock, started = Clock(), time.process_time()
        text, taken = await one_run(runner, sessions)
        wall, used = clock.lap(), time.process_time() - started
        if text != f"{steps - 1} additions" or taken != steps:
            raise SystemExit(f"google-adk run gave {text!r} in {taken} steps, not {steps}")
        if number >= max(runs // 10, 3):
            samples.append(wall)
            cpu.append(used)
    return {"engine": "adk", "store": "memory", "steps": steps, "samples": samples, "cpu_samples": cpu}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    print(json.dumps(asyncio.run(measure(args.steps, args.runs))))


if __name__ == "__main__":
    main()
