"""Making a pydantic-ai run durable: every model response and tool call is a child node.

``DurableModel`` wraps the agent's model: each request runs as a ``model@n`` step (streamed
when someone watches the run, see ``streaming.py``) whose output is the serialized ``ModelResponse`` (with the request that asked for it, for the
transcript, and a fingerprint of that request). The step is committed before pydantic-ai
sees the response, and on replay the recorded response comes back without calling the
model. If the request being replayed is not the one recorded (the workflow changed), the
run fails instead of diverging. ``DurableTools`` runs each tool call as a step named
after the tool, numbered ``<model step>.<call>``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, TypeAdapter
from pydantic_ai import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.capabilities import AbstractCapability
from pydantic_ai.capabilities.abstract import ValidatedToolArgs, WrapToolExecuteHandler
from pydantic_ai.exceptions import ModelRetry, ToolRetryError
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext, ToolDefinition

from ..context import Context
from ..errors import WorkflowError
from ..values import to_json
from .steps import MODEL_STEP, Work, tool_step
from .streaming import streamed, wants_stream

_VOLATILE = frozenset({"timestamp", "run_id", "conversation_id"})
_NESTED = (dict, list)


# One message at a time, configured as pydantic-ai's ModelMessagesTypeAdapter (the same JSON).
_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(
    ModelMessage, config=ConfigDict(defer_build=True, ser_json_bytes="base64", val_json_bytes="base64")
)


def dump_message(message: ModelMessage) -> dict[str, Any]:
    dumped: dict[str, Any] = _MESSAGE.dump_python(message, mode="json")
    return dumped


def load_message(data: dict[str, Any]) -> ModelMessage:
    return _MESSAGE.validate_python(data)


def fingerprint(request: dict[str, Any], parameters: ModelRequestParameters) -> str:
    """What identifies a request across replays: its content and the tools offered, not its timestamps."""

    def strip(value: Any) -> Any:  # only containers are walked: most values are scalars
        if isinstance(value, dict):
            return {k: strip(v) if type(v) in _NESTED else v for k, v in value.items() if k not in _VOLATILE}
        return [strip(v) if type(v) in _NESTED else v for v in value]

    tools = sorted(t.name for t in (*parameters.function_tools, *parameters.output_tools))
    text = json.dumps(
        [strip(request) if type(request) in _NESTED else request, tools], sort_keys=True, default=str
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class AgentTurn:
    """One execution of an agent node: its context and the model steps taken so far."""

    ctx: Context
    agent: str
    steps: int = 0
    last_response: ModelResponse | None = None
    tool_calls: dict[str, int] = field(default_factory=dict)

    def step_run_id(self) -> str | None:
        # A retried attempt must ask the model again, so its steps get paths of their own.
        attempt = self.ctx.attempt_count
        return None if attempt == 1 else f"{self.steps}r{attempt}"

    async def model_step(
        self,
        call: Callable[[Context], Awaitable[ModelResponse]],
        messages: list[ModelMessage],
        parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self.steps += 1
        request = dump_message(messages[-1]) if messages else {}
        asked = fingerprint(request, parameters)

        live: list[ModelResponse] = []

        async def run(step: Context) -> dict[str, Any]:
            response = await call(step)
            live.append(response)
            return {"request": request, "response": dump_message(response), "fingerprint": asked}

        recorded = await self.ctx.run_node(MODEL_STEP, Work(run), run_id=self.step_run_id())
        if recorded.get("fingerprint") != asked:
            raise WorkflowError(
                f"Agent '{self.agent}': the log no longer matches this workflow at model step {self.steps} "
                f"of {self.ctx.node_path}: the recorded request differs from the one the agent makes now "
                "(its instruction, input, tools or earlier answers changed). Start a new run."
            )
        # Asked just now: the live response (equal to the recorded one); else read it back.
        response = live[0] if live else load_message(recorded["response"])
        assert isinstance(response, ModelResponse)
        self.last_response = response
        self.tool_calls = {
            part.tool_call_id: number
            for number, part in enumerate((p for p in response.parts if isinstance(p, ToolCallPart)), start=1)
        }
        return response

    async def tool_step(self, name: str, call_id: str | None, call: Callable[[], Awaitable[Any]]) -> Any:
        number = self.tool_calls.get(call_id or "", 0)
        if not number:
            number = len(self.tool_calls) + 1
            self.tool_calls[call_id or f"#{number}"] = number

        asked_again: list[ToolRetryError] = []

        async def run(step: Context) -> dict[str, Any]:
            try:
                result = await call()
            except ToolRetryError as retry:  # the model is asked to try again: a result, not a failure
                asked_again.append(retry)
                return {"retry": str(retry.tool_retry.content)}
            return {"result": to_json(result, f"The result of tool {name}")}

        recorded = await self.ctx.run_node(tool_step(name), Work(run), run_id=f"{self.steps}.{number}")
        if "retry" in recorded:
            if asked_again:
                raise asked_again[0]  # as pydantic-ai made it (its retry budget counted once)
            raise ModelRetry(recorded["retry"])  # replayed: pydantic-ai counts and wraps it
        return recorded["result"]


_turn: ContextVar[AgentTurn] = ContextVar("engine_agent_turn")


def current_turn() -> AgentTurn:
    return _turn.get()


def enter_turn(turn: AgentTurn) -> Any:
    return _turn.set(turn)


def leave_turn(token: Any) -> None:
    _turn.reset(token)


class DurableModel(WrapperModel):
    """A model whose every request is a recorded step of the running agent node."""

    def __init__(self, wrapped: Model) -> None:
        super().__init__(wrapped)

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        async def call(step: Context) -> ModelResponse:
            if wants_stream(self.wrapped, step):
                return await streamed(self.wrapped, step, messages, model_settings, model_request_parameters)
            return await self.wrapped.request(messages, model_settings, model_request_parameters)

        return await current_turn().model_step(call, messages, model_request_parameters)


class DurableTools(AbstractCapability[Any]):
    """Runs every tool call of the agent as a recorded step (a capability: the agent's own toolset stays its fast path)."""

    async def wrap_tool_execute(
        self,
        ctx: RunContext[Any],
        *,
        call: ToolCallPart,
        tool_def: ToolDefinition,
        args: ValidatedToolArgs,
        handler: WrapToolExecuteHandler,
    ) -> Any:
        async def execute() -> Any:
            return await handler(args)

        return await current_turn().tool_step(call.tool_name, call.tool_call_id, execute)
