"""``LlmAgent`` (alias ``Agent``): an LLM agent as a workflow node, on pydantic-ai.

One execution of the node is one conversation with the model, driven by pydantic-ai's
``Agent``: model calls and tool calls run as recorded child steps (``durable.py``), so a
resumed or restarted run replays them instead of calling the model again. Tool calls that
need approval end pydantic-ai's run with ``DeferredToolRequests``; the node asks a person
(one question per call, all at once) and continues the conversation with the answers. In
``chat`` mode every text reply is a question whose answer is the user's next message.
A ``transfer_to_agent`` call hands the conversation to a sub-agent, the parent or a peer
(``transfer.py``); the agent that finally answers gives this node its output.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Sequence
from functools import cached_property
from typing import Any, Literal

from pydantic import Field, PrivateAttr
from pydantic_ai import Agent as PydanticAgent
from pydantic_ai import DeferredToolRequests, DeferredToolResults, ModelMessage, ToolOutput
from pydantic_ai.exceptions import UnexpectedModelBehavior
from pydantic_ai.models import Model

from ..context import Context
from ..errors import WorkflowError
from ..events import RequestInput
from ..nodes import BaseNode
from .approval import approval_request, approval_result
from .delegation import FINISH_INSTRUCTION, delegated, delegation_tool, finish_output, finished
from .durable import AgentTurn, DurableModel, current_turn, durable_tool, enter_turn, leave_turn
from .errors import AgentConfigurationError, AgentOutputError
from .models import build_model, check_model, chosen_model, model_label
from .steps import APPROVAL, REPLY
from .templates import as_text, fill
from .tools import BaseTool, as_tool
from .transfer import (
    MAX_TRANSFERS,
    Handoff,
    HandoffResult,
    Transfer,
    adopt,
    chosen_agent,
    handed_back,
    transfer_output,
    tree,
)

EMPTY_INPUT_PROMPT = "Begin."


class LlmAgent(BaseNode):
    """An LLM agent node.

    ``model`` is a model string (``"openai:gpt-5-mini"``, ``"gemini-flash-latest"``) or a
    pydantic-ai ``Model`` (a ``FunctionModel`` in tests). ``instruction`` may use ``{key}``
    placeholders filled from the node's input and session state. ``output_schema``
    (a pydantic model, ``str`` or another type) is what the model must answer;
    ``output_key`` also writes the answer to state. ``retries`` is how often pydantic-ai
    lets the model correct invalid tool arguments or output within one attempt.
    ``sub_agents`` may be handed the conversation (``transfer_to_agent``); a sub-agent may also
    hand it back to its parent or on to its peers unless ``disallow_transfer_to_parent`` /
    ``disallow_transfer_to_peers``. ``mode`` is ADK's: ``"chat"`` (every text reply is a
    question to the user), ``"task"`` (questions when it needs them; it ends with
    ``finish_task``) or ``"single_turn"`` (its answer, no questions). A sub-agent in task or
    single_turn mode is offered to its parent as a tool named after it (``delegation.py``);
    one without a mode is a transfer target, and an agent in a workflow without one runs
    single_turn.
    """

    model: Any = None
    instruction: str = ""
    tools: list[Any] = Field(default_factory=list)
    output_schema: Any = None
    input_schema: Any = None
    output_key: str | None = None
    mode: Literal["chat", "task", "single_turn"] | None = None
    sub_agents: list[LlmAgent] = Field(default_factory=list)
    disallow_transfer_to_parent: bool = False
    disallow_transfer_to_peers: bool = False
    retries: int = 1
    rerun_on_resume: bool = True

    _model: Model | str | None = PrivateAttr(default=None)
    _tools: list[BaseTool] = PrivateAttr(default_factory=list)
    _parent: LlmAgent | None = PrivateAttr(default=None)
    _agents: dict[bool, PydanticAgent[None, Any]] = PrivateAttr(default_factory=dict)
    _swapped: dict[Any, DurableModel] = PrivateAttr(default_factory=dict)  # overriding models, built
    _derived: tuple[bool, bool] = PrivateAttr(default=(False, False))  # input/output type from schemas
    _shape: tuple[tuple[Any, ...], tuple[Any, ...]] | None = PrivateAttr(default=None)

    def __init__(self, **data: Any) -> None:
        super().__init__(**data)
        # Checked here, not in model_post_init, so the error is not wrapped by pydantic.
        self._check()

    def __setattr__(self, name: str, value: Any) -> None:
        """A change after construction takes effect: the agent is checked and built again."""
        if name in _FIXED and self._shape is not None:
            raise AgentConfigurationError(
                f"Agent '{self.name}': {name} cannot change after construction (it names the node's "
                "path in the log); build a new agent"
            )
        super().__setattr__(name, value)
        if name in _RECONFIGURED and self._shape is not None:
            self._reconfigure()

    def _reconfigure(self) -> None:
        derived_input, derived_output = self._derived
        if derived_input:
            self.input_type = None
        if derived_output:
            self.output_type = None
        self._model = self._parent._model if self.model is None and self._parent is not None else None
        top = self
        while top._parent is not None:
            top = top._parent
        for agent in tree(top):  # a parent's tools and its peers' transfer targets follow its mode
            agent._agents.clear()
        self.__dict__.pop("_tool_schemas", None)
        self._check()
        for sub in self.sub_agents:
            if sub.model is None:  # it uses this agent's model, whatever it is now
                sub._reconfigure()

    def _check(self) -> None:
        for sub in self.sub_agents:
            if not isinstance(sub, LlmAgent):
                raise AgentConfigurationError(f"Agent '{self.name}': sub_agents must be LlmAgent instances")
        if self.mode == "task" and self.sub_agents:
            raise AgentConfigurationError(
                f"Agent '{self.name}': an agent in mode='task' must be a leaf (it has sub-agents "
                f"{[s.name for s in self.sub_agents]}); give them to its parent, or use another mode"
            )
        if self.model is not None:
            self._model = check_model(self.model, self.name)
            for sub in self.sub_agents:
                sub.inherit_model(self._model)
        self._tools = [as_tool(item) for item in self.tools]
        names = [t.name for t in self._tools] + [s.name for s in self.sub_agents]
        doubles = sorted({n for n in names if names.count(n) > 1})
        if doubles:
            raise AgentConfigurationError(f"Agent '{self.name}': two tools or sub-agents are named {doubles}")
        adopt(self, self.sub_agents)
        for sub in self.sub_agents:
            sub._parent = self
        derived_input = self.input_type is None and self.input_schema is not None
        if derived_input:
            self.input_type = self.input_schema
        derived_output = self.output_type is None and self.output_schema is not None
        if derived_output:
            self.output_type = self.output_schema
        self._derived = (derived_input, derived_output)
        self._shape = (tuple(self.tools), tuple(self.sub_agents))

    def inherit_model(self, model: Model | str) -> None:
        """A sub-agent without a model of its own uses its parent's (as in ADK)."""
        if self._model is None:
            self._model = model
            for sub in self.sub_agents:
                sub.inherit_model(model)

    @property
    def parent_agent(self) -> LlmAgent | None:
        """The agent this one is a sub-agent of (None for a top agent)."""
        return self._parent

    @property
    def model_name(self) -> str:
        """The model as the dashboard names it."""
        return "(none)" if self._model is None else model_label(self._model)

    def _output_spec(self, root: bool) -> list[Any]:
        wanted = self.output_schema if self.output_schema is not None else str
        spec: list[Any] = []
        if self.mode == "chat":
            spec.append(str)  # a text reply is a question to the user
            if wanted is not str:
                spec.append(ToolOutput(wanted, name="final_result", description="End the conversation."))
        elif self.mode == "task":
            spec.extend([str, finish_output(self)])  # questions to the user, then finish_task
        else:
            spec.append(wanted)
        transfer = transfer_output(self, root=root)
        if transfer is not None:
            spec.append(transfer)
        if any(t.requires_approval for t in self._tools):
            spec.append(DeferredToolRequests)
        return spec

    def _agent(self, root: bool) -> PydanticAgent[None, Any]:
        """pydantic-ai's agent for this one; as the root of a transfer it offers only its sub-agents."""
        made = self._agents.get(root)
        if made is not None:
            return made
        made = self._agents[root] = PydanticAgent(
            None if self._model is None else DurableModel(build_model(self._model, self.name)),
            output_type=self._output_spec(root),
            tools=[
                *(durable_tool(t.pydantic_tool()) for t in self._tools),
                *(delegation_tool(sub) for sub in self.sub_agents if delegated(sub)),
            ],
            retries=self.retries,
            name=self.name,
        )
        return made

    @cached_property
    def _tool_schemas(self) -> dict[str, dict[str, Any]]:
        return {t.name: t.parameters for t in self._tools}

    def check_input(self, value: Any) -> Any:
        if not isinstance(value, Handoff):
            return super().check_input(value)
        if self.input_validator is None:
            return value
        try:  # reached by transfer: the input the conversation started from must be what it takes
            return Handoff(value.messages, super().check_input(value.input))
        except WorkflowError as error:
            raise type(error)(
                f"{error} (agent '{self.name}' was handed the conversation by transfer_to_agent, "
                "and its input_schema is checked against the input the conversation started from)"
            ) from error

    def check_output(self, value: Any) -> Any:
        return value if isinstance(value, HandoffResult) else super().check_output(value)

    def restore_output(self, data: Any) -> Any:
        # What a handed-to agent gave back stays as recorded: only its root reads it (handed_back).
        if HandoffResult.recorded(data) or Transfer.recorded(data):
            if not isinstance(data, dict) or self.output_type is None:
                return data
            try:
                return super().restore_output(data)  # the agent's own output that has these keys
            except WorkflowError:
                return data
        return super().restore_output(data)

    def _model_now(self) -> DurableModel | None:
        """The model to run with this turn when it is not the agent's own (engine.model_overrides)."""
        chosen = chosen_model(self.name, self._model)
        if chosen is self._model and chosen is not None:
            return None
        if chosen is None:
            raise AgentConfigurationError(
                f"Agent '{self.name}' has no model: give it model= (a model string or a pydantic-ai "
                "Model), make it a sub-agent of an agent that has one, or name one for it in "
                "Runner(models=...)"
            )
        key = chosen if isinstance(chosen, str) else id(chosen)
        made = self._swapped.get(key)
        if made is None or (not isinstance(chosen, str) and made.wrapped is not chosen):
            made = self._swapped[key] = DurableModel(build_model(chosen, self.name))
        return made

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        if self._shape != (tuple(self.tools), tuple(self.sub_agents)):
            self._reconfigure()  # its tools or sub-agents were changed in place
        turn = AgentTurn(ctx, self.name)
        token = enter_turn(turn)
        try:
            if isinstance(node_input, Handoff):  # handed the conversation by the root of a transfer
                values = node_input.input if self.input_validator is not None else None
                answer = await self._converse(ctx, node_input, root=False, values=values)
                answered = not isinstance(answer, Transfer)
                if answered and self.output_key:
                    ctx.state[self.output_key] = answer
                ctx.output = HandoffResult.of(answer)
                return
            else:
                output, answered = await self._lead(ctx, node_input)
        finally:
            leave_turn(token)
        if answered and self.output_key:
            ctx.state[self.output_key] = output
        ctx.output = output
        return
        yield  # pragma: no cover

    async def _lead(self, ctx: Context, node_input: Any) -> tuple[Any, bool]:
        """Converse, running every transfer; the final output, and whether this agent gave it."""
        output = await self._converse(ctx, node_input, root=True)
        agents = {agent.name: agent for agent in tree(self)}
        for _ in range(MAX_TRANSFERS):
            if not isinstance(output, Transfer):
                return output, True
            target = agents.get(output.transfer_to_agent)
            if target is None:  # a recorded transfer to an agent this workflow no longer has
                raise WorkflowError(
                    f"Agent '{self.name}': the log hands the conversation to '{output.transfer_to_agent}', "
                    f"which is not among its agents now ({', '.join(agents)}): the workflow changed. "
                    "Start a new run."
                )
            if target is self:  # handed back: its instruction still reads the node's input
                output = await self._converse(ctx, output.handoff(), root=True, values=node_input)
                continue
            output = handed_back(await ctx.run_node(target, output.handoff(node_input)), target)
            if not isinstance(output, Transfer):
                return output, False
        raise AgentOutputError(
            f"Agent '{self.name}': the conversation was transferred {MAX_TRANSFERS} times without "
            "an answer; the agents' instructions should say when to answer instead of transferring"
        )

    async def _converse(self, ctx: Context, node_input: Any, *, root: bool, values: Any = None) -> Any:
        """One agent's part of the conversation: its answer, or the ``Transfer`` it chose.

        On a ``Handoff`` the instruction is filled from state (and ``values``, the root's input,
        when the conversation comes back to the root).
        """
        history: list[ModelMessage] | None = None
        if isinstance(node_input, Handoff):
            history, prompt = list(node_input.messages), None
            instruction = fill(self.instruction, self.name, ctx.state, values)
        else:
            prompt = EMPTY_INPUT_PROMPT if node_input is None else as_text(node_input)
            instruction = fill(self.instruction, self.name, ctx.state, node_input)
        if self.mode == "task":
            instruction = f"{instruction}\n\n{FINISH_INSTRUCTION}" if instruction else FINISH_INSTRUCTION
        results: DeferredToolResults | None = None
        model = self._model_now()
        while True:
            output, history = await self._run_model(prompt, history, results, instruction, root, model)
            prompt, results = None, None
            if isinstance(output, DeferredToolRequests):
                results = await self._ask_approvals(ctx, output)
                continue
            target = chosen_agent(output)
            if target is not None:
                return Transfer.of(target, history)
            if self.mode in _ASKS and isinstance(output, str):
                answer = await ctx.run_node(REPLY, _reply_request(self.name, output))
                if not str(answer or "").strip():
                    if self.mode == "chat":
                        return output
                    answer = "(no answer)"  # a task ends only with finish_task
                prompt = str(answer)
                continue
            return finished(self, output) if self.mode == "task" else output

    async def _run_model(
        self,
        prompt: str | None,
        history: Sequence[ModelMessage] | None,
        results: DeferredToolResults | None,
        instruction: str,
        root: bool,
        model: DurableModel | None = None,
    ) -> tuple[Any, list[ModelMessage]]:
        try:
            result = await self._agent(root).run(
                prompt,
                model=model,
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
        """One question per call, specific to the attempt and the call (name, arguments, id):
        an answer is never reused for another call (engine.asking checks the question too)."""
        calls = list(requests.approvals)
        turn = current_turn()
        retried = turn.attempt > 1  # the first attempt numbers them approval@1, @2, ...
        asks = [
            ctx.run_node(
                APPROVAL,
                approval_request(
                    call.tool_name,
                    self._tool_schemas.get(call.tool_name, {"type": "object"}),
                    call.args_as_dict(),
                    agent=self.name,
                    call_id=call.tool_call_id,
                ),
                run_id=turn.call_run_id(turn.call_number(call.tool_call_id)) if retried else None,
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

# Changing one of these after construction checks and builds the agent again.
_RECONFIGURED = frozenset(
    {
        "model",
        "tools",
        "output_schema",
        "input_schema",
        "mode",
        "sub_agents",
        "disallow_transfer_to_parent",
        "disallow_transfer_to_peers",
        "retries",
    }
)
_FIXED = frozenset({"name"})
_ASKS = frozenset({"chat", "task"})  # modes whose text replies are questions to the user


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
