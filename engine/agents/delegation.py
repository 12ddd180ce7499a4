"""Agent teams (ADK's collaboration modes): sub-agents a coordinator delegates tasks to.

A sub-agent in ``mode="task"`` or ``mode="single_turn"`` is not a ``transfer_to_agent``
target: its parent is offered one tool per such sub-agent, named after it and described by its
``description`` (a task agent's with ADK's note not to call it in parallel). The tool's
parameters are the sub-agent's ``input_schema``, or ``{"request": string}``; arguments that do
not validate are sent back to the model, and fail the node with what was invalid once its
``retries`` are spent. A call runs the sub-agent as a child node of the coordinator
(``travel_planner@1/flight_booker@1.1``: model step 1, call 1), so its model steps are recorded
under it and a replay returns its recorded output without asking any model; that output is the
tool's result and the coordinator carries on. A ``task`` agent may ask the user (its text
replies are questions) and ends with ``finish_task``, whose arguments (its ``output_schema``,
or ``{"result": string}``) are its output; a ``single_turn`` agent's answer is its output.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field, ValidationError, create_model
from pydantic_ai import Tool, ToolOutput
from pydantic_ai.exceptions import ModelRetry
from pydantic_ai.tools import RunContext

from ..values import to_json
from .durable import current_turn

if TYPE_CHECKING:
    from .agent import LlmAgent

DELEGATED = frozenset({"task", "single_turn"})
FINISH_TASK = "finish_task"
# ADK's words for a task agent (google.adk.agents.llm.task._finish_task_tool).
FINISH_INSTRUCTION = (
    "Do NOT call `finish_task` prematurely. Use your available tools to fully complete every aspect "
    "of the delegated task first. If the task is unclear, ask the user for clarification before "
    "proceeding. Once the task is fully complete, call `finish_task` by itself with no accompanying "
    "text output."
)
_FINISH_DESCRIPTION = (
    "Signal that this agent has completed its delegated task. Call this when you have finished your "
    "delegated task."
)
_TASK_NOTE = (
    "\nIMPORTANT: This tool delegates execution to a specialized agent. Do NOT call this tool in "
    "parallel with any other tools."
)


class TaskResult(BaseModel):
    """What a task agent without an ``output_schema`` gives ``finish_task`` (ADK's default)."""

    result: str = Field(description="A brief summary of what the agent accomplished.")


class _Request(BaseModel):
    request: str


class _TaskRequest(BaseModel):
    request: str = Field(description="Detailed instructions or context for the task sub-agent.")


def delegated(agent: LlmAgent) -> bool:
    """Whether ``agent`` is delegated to as a tool rather than handed the conversation."""
    return agent.mode in DELEGATED


def finish_output(agent: LlmAgent) -> ToolOutput[Any]:
    """The ``finish_task`` output tool of a task agent: its ``output_schema`` (a non-object one
    wrapped as ``{"result": ...}``, as ADK does), or ``TaskResult``."""
    schema = agent.output_schema if agent.output_schema is not None else TaskResult
    wrapped = not (isinstance(schema, type) and issubclass(schema, BaseModel))
    kind: Any = create_model("FinishTask", result=(schema, ...)) if wrapped else schema
    described = _FINISH_DESCRIPTION + (
        " Pass the required output data in the parameters." if agent.output_schema is not None else ""
    )
    return ToolOutput(kind, name=FINISH_TASK, description=described)


def finished(agent: LlmAgent, output: Any) -> Any:
    """A task agent's output from what ``finish_task`` was given (a wrapped value unwrapped)."""
    schema = agent.output_schema
    if schema is None:
        return output.model_dump(mode="json")  # {"result": ...}, as ADK gives it
    if not (isinstance(schema, type) and issubclass(schema, BaseModel)):
        return output.result
    return output


def delegation_tool(sub: LlmAgent) -> Tool[Any]:
    """The tool that runs ``sub`` as a child of the agent calling it and returns its output."""
    request = _TaskRequest if sub.mode == "task" else _Request
    given = sub.input_schema
    schema = given if isinstance(given, type) and issubclass(given, BaseModel) else request
    description = sub.description + (_TASK_NOTE if sub.mode == "task" else "")

    async def delegate(ctx: RunContext[Any], **arguments: Any) -> Any:
        node_input = _task_input(sub, schema, arguments)
        turn = current_turn()
        run_id = turn.call_run_id(turn.call_number(ctx.tool_call_id))
        output = await turn.ctx.run_node(sub, node_input, run_id=run_id)
        return to_json(output, f"The result of agent {sub.name}")

    return Tool.from_schema(
        delegate,
        name=sub.name,
        description=description.strip() or None,
        json_schema=_parameters(schema),
        takes_ctx=True,
        sequential=sub.mode == "task",  # a task may ask the user: one at a time
    )


def _parameters(schema: type[BaseModel]) -> dict[str, Any]:
    if schema is _Request:  # ADK's declaration of a single-turn agent without an input_schema
        return {"type": "object", "properties": {"request": {"type": "string"}}, "required": ["request"]}
    return schema.model_json_schema()


def _task_input(sub: LlmAgent, schema: type[BaseModel], arguments: dict[str, Any]) -> Any:
    """The sub-agent's input: the arguments checked against its ``input_schema``, or the request."""
    try:
        checked = schema.model_validate(arguments)
    except ValidationError as error:
        wrong = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'input'}: {e['msg']}" for e in error.errors())
        raise ModelRetry(
            f"Agent '{sub.name}' takes {schema.__name__}, and its arguments are invalid: {wrong}"
        ) from error
    return checked if schema is sub.input_schema else checked.request  # type: ignore[attr-defined]
