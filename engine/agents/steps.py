"""The child nodes an agent runs: model steps, tool calls and questions.

A step's input is a callable that does the work; only its output (JSON) is stored, so on
replay the recorded output comes back and the callable is never called: a recorded model
response is not requested again and a completed tool call does not run again.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..context import Context
from ..events import RequestInput
from ..nodes import BaseNode


@dataclass(frozen=True, slots=True)
class Work:
    """What a step does when it really runs: ``call(ctx)`` (the step's context) returns the JSON to record."""

    call: Callable[[Context], Awaitable[Any]]


class Step(BaseNode):
    """Runs its ``Work`` input once and records the result as its output."""

    def _run_impl(self, *, ctx: Context, node_input: Any) -> Any:
        """The work's coroutine: the executor takes its result as the output (no generator around it)."""
        assert isinstance(node_input, Work)
        return node_input.call(ctx)


class Ask(BaseNode):
    """Asks its ``RequestInput`` input; the answer becomes its output (``rerun_on_resume=False``)."""

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        assert isinstance(node_input, RequestInput)
        yield node_input


MODEL_STEP = Step(name="model")
APPROVAL = Ask(name="approval")
REPLY = Ask(name="reply")

_tool_steps: dict[str, Step] = {}


def tool_step(name: str) -> Step:
    """The step node of the tool called ``name`` (one per name, so paths read ``lookup@1.1``)."""
    step = _tool_steps.get(name)
    if step is None:
        safe = name if name.isidentifier() else "tool_" + "".join(c if c.isalnum() else "_" for c in name)
        step = _tool_steps[name] = Step(name=safe)
    return step
