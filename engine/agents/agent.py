"""``LlmAgent`` (alias ``Agent``): an LLM agent as a workflow node, on pydantic-ai.

One execution of the node is one conversation with the model, driven by pydantic-ai's
``Agent``: model calls and tool calls run as recorded child steps (``durable.py``), so a
resumed or restarted run replays them instead of calling the model again. Tool calls that
need approval end pydantic-ai's run with ``DeferredToolRequests``; the node asks a person
(one question per call, all at once) and continues the conversation with the answers. In
``chat`` mode every text reply is a question whose answer is the user's next message.
A ``transfer_to_agent`` call hands the conversation to one of ``sub_agents``, whose output
becomes this node's.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, Field, PrivateAttr, create_model
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ModelMessage, ToolOutput
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models import Model
from pydantic_ai.toolsets import FunctionToolset

from ..context import Context
from ..events import RequestInput
from ..nodes import BaseNode
from .approval import approval_request, approval_result
from .durable import AgentTurn, DurableModel, DurableToolset, enter_turn, leave_turn
from .errors import AgentConfigurationError, AgentOutputError
from .models import build_model, check_model, model_label
from .steps import APPROVAL, REPLY
from .templates import as_text, fill
from .tools import BaseTool, as_tool

EMPTY_INPUT_PROMPT = "Begin."


@dataclass(frozen=True, slots=True)
class Handoff:
    """The conversation so far, handed to a sub-agent by ``transfer_to_agent``."""

    messages: list[ModelMessage]


class LlmAgent(BaseNode):
    """An LLM agent node.

    ``model`` is a model string (``"openai:gpt-5-mini"``, ``"gemini-flash-latest"``) or a
    pydantic-ai ``Model`` (a ``FunctionModel`` in tests). ``instruction`` may use ``{key}``
    placeholders filled from the node's input and session state. ``output_schema``
    (a pydantic model, ``str`` or another type) is what the model must answer;
    ``output_key`` also writes the answer to state. ``retries`` is how often pydantic-ai
    lets the model correct invalid tool arguments or output within one attempt.
    """

    model: Any = None
    instruction: str = ""
    tools: list[Any] = Field(default_factory=list)
    output_schema: Any = None
    input_schema: Any = None
    output_key: str | None = None
    mode: Literal["single_turn", "chat"] = "single_turn"
    sub_agents: list[LlmAgent] = Field(default_factory=list)
    retries: int = 1
    rerun_on_resume: bool = True

    _model: Model | str | None = PrivateAttr(default=None)
    _tools: list[BaseTool] = PrivateAttr(default_factory=list)

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        # Checked here, not in model_post_init, so the error is not wrapped by pydantic.
        self._check()

    def _check(self) -> None:
        for sub in self.sub_agents:
            if not isinstance(sub, LlmAgent):
                raise AgentConfigurationError(f"Agent '{self.name}': sub_agents must be LlmAgent instances")
        if self.model is not None:
            self._model = check_model(self.model, self.name)
            for sub in self.sub_agents:
                sub.inherit_model(self._model)
        self._tools = [as_tool(item) for item in self.tools]
        names = [t.name for t in self._tools] + [s.name for s in self.sub_agents]
        doubles = sorted({n for n in names if names.count(n) > 1})
        if doubles:
            raise AgentConfigurationError(f"Agent '{self.name}': two tools or sub-agents are named {doubles}")
        if self.input_type is None:
            self.input_type = self.input_schema
        if self.output_type is None and self.output_schema is not None:
            self.output_type = self.output_schema

    def inherit_model(self, model: Model | str) -> None:
        """A sub-agent without a model of its own uses its parent's (as in ADK)."""
        if self._model is None:
            self._model = model
            for sub in self.sub_agents:
                sub.inherit_model(model)

    @property
    def model_name(self) -> str:
        """The model as the dashboard names it."""
        return "(none)" if self._model is None else model_label(self._model)

    @cached_property
    def _transfer_type(self) -> type[BaseModel] | None:
        if not self.sub_agents:
            return None
        names = tuple(sub.name for sub in self.sub_agents)
        choice: Any = Literal.__getitem__(names)
        return create_model("TransferToAgent", agent_name=(choice, ...))

    def _output_spec(self) -> list[Any]:
        wanted = self.output_schema if self.output_schema is not None else str
        spec: list[Any] = []
        if self.mode == "chat":
            spec.append(str)  # a text reply is a question to the user
            if wanted is not str:
                spec.append(ToolOutput(wanted, name="final_result", description="End the conversation."))
        else:
            spec.append(wanted)
        if self._transfer_type is not None:
            described = "; ".join(f"{s.name}: {s.description or 'no description'}" for s in self.sub_agents)
            spec.append(
                ToolOutput(
                    self._transfer_type,
                    name="transfer_to_agent",
                    description=f"Hand the conversation to another agent ({described}).",
                )
            )
        if any(t.requires_approval for t in self._tools):
            spec.append(DeferredToolRequests)
        return spec

    @cached_property
    def _agent(self) -> PydanticAgent[None, Any]:
        if self._model is None:
            raise AgentConfigurationError(
                f"Agent '{self.name}' has no model: give it model= (a model string or a pydantic-ai "
                "Model), or make it a sub-agent of an agent that has one"
            )
        toolset = DurableToolset(FunctionToolset([t.pydantic_tool() for t in self._tools]))
        return PydanticAgent(
            DurableModel(build_model(self._model, self.name)),
            output_type=self._output_spec(),
            toolsets=[toolset],
            retries=self.retries,
            name=self.name,
        )

    @cached_property
    def _tool_schemas(self) -> dict[str, dict[str, Any]]:
        return {t.name: t.parameters for t in self._tools}

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        turn = AgentTurn(ctx, self.name)
        token = enter_turn(turn)
        try:
            output = await self._converse(ctx, node_input)
        finally:
            leave_turn(token)
        if output is _DELEGATED:
            return
        if self.output_key:
            ctx.state[self.output_key] = output
        ctx.output = output
        return
        yield  # pragma: no cover

    async def _converse(self, ctx: Context, node_input: Any) -> Any:
        history: list[ModelMessage] | None = None
        if isinstance(node_input, Handoff):
            history, prompt = list(node_input.messages), None
            instruction = fill(self.instruction, self.name, ctx.state, None)
        else:
            prompt = EMPTY_INPUT_PROMPT if node_input is None else as_text(node_input)
            instruction = fill(self.instruction, self.name, ctx.state, node_input)
        results: DeferredToolResults | None = None
        while True:
            output, history = await self._run_model(prompt, history, results, instruction)
            prompt, results = None, None
            if isinstance(output, DeferredToolRequests):
                results = await self._ask_approvals(ctx, output)
                continue
            if self._transfer_type is not None and isinstance(output, self._transfer_type):
                target = next(s for s in self.sub_agents if s.name == output.agent_name)  # type: ignore[attr-defined]
                await ctx.run_node(target, Handoff(history), use_as_output=True)
                return _DELEGATED
            if self.mode == "chat" and isinstance(output, str):
                answer = await ctx.run_node(REPLY, _reply_request(self.name, output))
                if not str(answer or "").strip():
                    return output
                prompt = str(answer)
                continue
            return output

    async def _run_model(
        self,
        prompt: str | None,
        history: Sequence[ModelMessage] | None,
        results: DeferredToolResults | None,
        instruction: str,
    ) -> tuple[Any, list[ModelMessage]]:
        try:
            result = await self._agent.run(
                prompt,
                message_history=history,
                deferred_tool_results=results,
                instructions=instruction or None,
            )
        except UnexpectedModelBehavior as error:
            raise AgentOutputError(
                f"Agent '{self.name}': {error.message}{_what_was_invalid(error)}"
            ) from error
        return result.output, result.all_messages()

    async def _ask_approvals(self, ctx: Context, requests: DeferredToolRequests) -> DeferredToolResults:
        calls = list(requests.approvals)
        asks = [
            ctx.run_node(
                APPROVAL,
                approval_request(
                    call.tool_name,
                    self._tool_schemas.get(call.tool_name, {"type": "object"}),
                    call.args_as_dict(),
                    agent=self.name,
                ),
            )
            for call in calls
        ]
        answers = await asyncio.gather(*asks)
        return DeferredToolResults(
            approvals={
                call.tool_call_id: approval_result(answer, call.args_as_dict())
                for call, answer in zip(calls, answers, strict=True)
            }
        )


Agent = LlmAgent

_DELEGATED = object()


def _reply_request(agent: str, reply: str) -> RequestInput:
    return RequestInput(
        message=reply,
        payload={"kind": "chat_reply", "agent": agent, "reply": reply},
        response_schema={"type": "string", "title": "Your reply (leave empty to end the conversation)"},
    )


def _what_was_invalid(error: UnexpectedModelBehavior) -> str:
    """The validation errors pydantic-ai last sent back to the model, from the error's cause chain."""
    seen: list[str] = []
    cause: BaseException | None = error.__cause__
    while cause is not None and len(seen) < 3:
        seen.append(f"{type(cause).__name__}: {cause}")
        cause = cause.__cause__
    return f" (what was invalid: {'; '.join(seen)})" if seen else ""
