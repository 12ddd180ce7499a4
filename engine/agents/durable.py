"""Making a pydantic-ai run durable: every model response and tool call is a child node.

``DurableModel`` wraps the agent's model: each request runs as a ``model@n`` step (streamed
when someone watches the run, see ``streaming.py``) whose output is the serialized
``ModelResponse``, with the request that asked for it (its last message: what is new in it)
and a digest of the tools it offered. The step is committed before pydantic-ai sees the
response, and on replay the recorded response comes back without calling the model. If the
request being replayed is not the one recorded (the workflow changed), the run fails instead
of diverging. ``durable_tool`` makes each call of a tool a step named after the tool,
numbered ``<model step>.<call>``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from copy import copy
from dataclasses import dataclass, field, fields
from typing import Any

from pydantic import ConfigDict, TypeAdapter
from pydantic_ai import ModelMessage, ModelResponse, Tool, ToolCallPart
from pydantic_ai._function_schema import FunctionSchema
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.wrapper import WrapperModel
from pydantic_ai.settings import ModelSettings
from pydantic_ai.tools import RunContext

from ..context import Context
from ..errors import WorkflowError
from ..values import to_json
from .steps import MODEL_STEP, Step, Work, tool_step
from .streaming import streamed, wants_stream

_VOLATILE = frozenset({"timestamp", "run_id", "conversation_id"})
_NESTED = (dict, list)


# Configured as pydantic-ai's ModelMessagesTypeAdapter (the same JSON): one message at a time,
# and responses (every step records one) through their own type, sparing the union's discriminator.
_CONFIG = ConfigDict(defer_build=True, ser_json_bytes="base64", val_json_bytes="base64")
_MESSAGE: TypeAdapter[ModelMessage] = TypeAdapter(ModelMessage, config=_CONFIG)
_RESPONSES: TypeAdapter[list[ModelResponse]] = TypeAdapter(list[ModelResponse], config=_CONFIG)


def dump_message(message: ModelMessage) -> dict[str, Any]:
    dumped: dict[str, Any] = _MESSAGE.dump_python(message, mode="json")
    return dumped


def dump_response(response: ModelResponse) -> dict[str, Any]:
    dumped: dict[str, Any] = _RESPONSES.dump_python([response], mode="json")[0]
    return dumped


def load_response(data: dict[str, Any]) -> ModelResponse:
    return _RESPONSES.validate_python([data])[0]


def _strip(value: Any) -> Any:
    """``value`` without the parts that differ between replays (timestamps, run ids)."""
    if isinstance(value, dict):
        return {k: _strip(v) if type(v) in _NESTED else v for k, v in value.items() if k not in _VOLATILE}
    return [_strip(v) if type(v) in _NESTED else v for v in value]


def _tool_names(parameters: ModelRequestParameters) -> list[str]:
    return sorted(t.name for t in (*parameters.function_tools, *parameters.output_tools))


_digests: dict[tuple[str, ...], str] = {}


def tools_digest(parameters: ModelRequestParameters) -> str:
    """A short digest of the tools a request offers (an agent offers the same few again and again)."""
    names = tuple(t.name for t in (*parameters.function_tools, *parameters.output_tools))
    digest = _digests.get(names)
    if digest is None:
        text = json.dumps(sorted(names))
        digest = _digests[names] = hashlib.sha256(text.encode()).hexdigest()[:16]
    return digest


def fingerprint(request: dict[str, Any], parameters: ModelRequestParameters) -> str:
    """How steps recorded before ``tools`` was kept identified their request: content and tools, hashed."""
    text = json.dumps([_strip(request), _tool_names(parameters)], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def matches(
    recorded: dict[str, Any], request: dict[str, Any], tools: str, parameters: ModelRequestParameters
) -> bool:
    """Whether a recorded model step answered the request the agent makes now (only read on replay).

    A step records the request itself and a digest of the tools offered; one recorded by an
    earlier version carries a ``fingerprint`` of both instead.
    """
    if "tools" not in recorded:
        return bool(recorded.get("fingerprint") == fingerprint(request, parameters))
    return bool(recorded["tools"] == tools and _strip(recorded.get("request") or {}) == _strip(request))


@dataclass
class AgentTurn:
    """One execution of an agent node: its context and the model steps taken so far."""

    ctx: Context
    agent: str
    steps: int = 0
    tool_calls: dict[str, int] = field(default_factory=dict)
    attempt: int = 0  # set in __post_init__: the attempt this execution's steps belong to

    def __post_init__(self) -> None:
        # Retry counts restart in each turn, but a turn after a retry must go on with the
        # latest attempt the log holds, not replay the first one again (its failed tool call
        # would run again on its old approval): the attempt is the log's latest plus this one's.
        self.attempt = recorded_attempts(self.ctx) + self.ctx.attempt_count

    async def _step(self, node: Step, run: Callable[[Context], Awaitable[Any]], run_id: str | None) -> Any:
        """``run`` as a recorded step: a child node when someone watches the run (its ``started``
        event shows it in flight, and a model streams its text from the step's path), else one
        ``completed`` event (``Context.step``). Either replays the same way."""
        ctx = self.ctx
        if ctx.watched:
            return await ctx.run_node(node, Work(run), run_id=run_id)

        def work() -> Awaitable[Any]:
            return run(ctx)

        return await ctx.step(node.name, work, run_id=run_id)

    def step_run_id(self) -> str | None:
        # A retried attempt must ask the model again, so its steps get paths of their own.
        attempt = self.attempt
        return None if attempt == 1 else f"{self.steps}r{attempt}"

    def call_run_id(self, number: int) -> str:
        """The run id of the ``number``-th tool call (or its approval) of the latest model step:
        specific to the attempt, so a retried attempt never reuses an earlier one's call or answer."""
        attempt = self.attempt
        return f"{self.steps}.{number}" if attempt == 1 else f"{self.steps}.{number}r{attempt}"

    def call_number(self, call_id: str | None) -> int:
        """The position of a tool call in the latest model response (1, 2, ...)."""
        number = self.tool_calls.get(call_id or "", 0)
        if not number:
            number = len(self.tool_calls) + 1
            self.tool_calls[call_id or f"#{number}"] = number
        return number

    async def model_step(
        self,
        call: Callable[[Context], Awaitable[ModelResponse]],
        messages: list[ModelMessage],
        parameters: ModelRequestParameters,
    ) -> ModelResponse:
        self.steps += 1
        request = dump_message(messages[-1]) if messages else {}
        tools = tools_digest(parameters)
        live: list[ModelResponse] = []

        async def run(step: Context) -> dict[str, Any]:
            response = await call(step)
            live.append(response)
            return {"request": request, "response": dump_response(response), "tools": tools}

        recorded = await self._step(MODEL_STEP, run, self.step_run_id())
        if live:  # asked just now: the live response is the recorded one
            response = live[0]
        else:
            if not matches(recorded, request, tools, parameters):
                raise WorkflowError(
                    f"Agent '{self.agent}': the log no longer matches this workflow at model step {self.steps} "
                    f"of {self.ctx.node_path}: the recorded request differs from the one the agent makes now "
                    "(its instruction, input, tools or earlier answers changed). Start a new run."
                )
            response = load_response(recorded["response"])
        self.tool_calls = {
            part.tool_call_id: number
            for number, part in enumerate((p for p in response.parts if isinstance(p, ToolCallPart)), start=1)
        }
        return response

    async def tool_step(self, name: str, call_id: str | None, call: Callable[[], Awaitable[Any]]) -> Any:
        number = self.call_number(call_id)
        live = False

        async def run(step: Context) -> dict[str, Any]:
            nonlocal live
            live = True
            try:
                result = await call()
            except ModelRetry as retry:  # the model is asked to try again: a result, not a failure
                return {"retry": retry.message, "call": call_id}
            return {"result": to_json(result, f"The result of tool {name}"), "call": call_id}

        recorded = await self._step(tool_step(name), run, self.call_run_id(number))
        if not live and recorded.get("call", call_id) != call_id:  # steps recorded before "call" pass
            raise WorkflowError(
                f"Agent '{self.agent}': the log no longer matches this workflow at the call of tool "
                f"{name} in model step {self.steps} of {self.ctx.node_path}: it was recorded for the "
                f"call {recorded.get('call')!r}, the model's response now has {call_id!r}. Start a new run."
            )
        if "retry" in recorded:
            raise ModelRetry(recorded["retry"])  # pydantic-ai counts it against the tool's retries
        return recorded["result"]


def recorded_attempts(ctx: Context) -> int:
    """How many attempts of this agent execution earlier turns left in the log before the
    latest one (0: the log has only the first, or nothing); their first steps are ``model@1r<n>``."""
    if ctx.attempt_count > 1:
        return 0  # a retry within this turn: the attempt count already says it
    records = ctx.recorded_paths
    base = ctx.node_path + "/model@1r"
    attempt = 1
    while f"{base}{attempt + 1}" in records:
        attempt += 1
    return attempt - 1


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


@dataclass(kw_only=True)
class _DurableSchema(FunctionSchema):
    """A tool's function schema whose every call runs as a recorded step of the agent node."""

    tool_name: str

    async def call(self, args_dict: dict[str, Any], ctx: RunContext[Any]) -> Any:
        def execute() -> Awaitable[Any]:
            return FunctionSchema.call(self, args_dict, ctx)

        return await current_turn().tool_step(self.tool_name, ctx.tool_call_id, execute)


def durable_tool(made: Tool[Any]) -> Tool[Any]:
    """``made`` with its calls recorded as steps (validation, schema and approval stay pydantic-ai's)."""
    schema = made.function_schema
    durable = copy(made)
    durable.function_schema = _DurableSchema(
        tool_name=made.name, **{f.name: getattr(schema, f.name) for f in fields(FunctionSchema)}
    )
    return durable
