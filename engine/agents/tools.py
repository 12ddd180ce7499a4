"""Tools: plain functions or ``BaseTool`` instances, given to agents or placed in graphs.

``tool(fn, requires_approval=True)`` (also ``@tool`` / ``@tool(...)``) makes a
``FunctionTool``. An agent hands its tools to pydantic-ai, which builds their schemas and
validates the model's arguments; a tool that needs approval asks a person first (see
``approval.py``). As a graph node a tool takes its arguments as its input (a dict, or the
value of its only parameter).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncGenerator, Callable
from functools import cached_property
from typing import Any

from pydantic import ValidationError, validate_call
from pydantic_ai import Tool

from ..context import Context
from ..errors import WorkflowError
from ..nodes import BaseNode
from ..values import to_json
from .approval import approval_request, approved_arguments
from .errors import AgentConfigurationError
from .steps import APPROVAL


class BaseTool(BaseNode):
    """A tool. Subclasses implement ``async def run(self, arguments: dict) -> Any`` and ``parameters``."""

    requires_approval: bool = False

    def model_post_init(self, context: Any, /) -> None:
        if self.requires_approval:
            self.rerun_on_resume = True  # it runs its approval question as a child

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (an object)."""
        return {"type": "object", "properties": {}}

    async def run(self, arguments: dict[str, Any]) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must implement run()")

    def pydantic_tool(self) -> Tool[Any]:
        """This tool for a pydantic-ai agent (arguments are checked against ``parameters``)."""

        async def call(**arguments: Any) -> Any:
            return await self.run(arguments)

        made = Tool.from_schema(
            call, name=self.name, description=self.description, json_schema=self.parameters
        )
        made.requires_approval = self.requires_approval
        return made

    def arguments_from(self, node_input: Any) -> dict[str, Any]:
        """A graph node's input as this tool's arguments."""
        if isinstance(node_input, dict):
            return node_input
        names = list(self.parameters.get("properties", {}))
        if len(names) == 1:
            return {names[0]: node_input}
        if node_input is None and not names:
            return {}
        raise WorkflowError(
            f"Tool '{self.name}' as a graph node needs a dict of its arguments ({', '.join(names)}), "
            f"got {type(node_input).__name__}"
        )

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        arguments = self.arguments_from(node_input)
        if self.requires_approval:
            request = approval_request(self.name, self.parameters, arguments, agent=None)
            answer = await ctx.run_node(APPROVAL, request)
            chosen, reason = approved_arguments(answer, arguments)
            if chosen is None:
                raise WorkflowError(
                    f"Tool '{self.name}': the call was rejected{f': {reason}' if reason else ''}"
                )
            arguments = chosen
        ctx.output = to_json(await self.run(arguments), f"The result of tool {self.name}")
        return
        yield  # pragma: no cover


class FunctionTool(BaseTool):
    """A tool that calls a Python function; its schema comes from the signature and docstring."""

    func: Callable[..., Any]

    def __init__(self, func: Callable[..., Any] | None = None, /, **data: Any) -> None:
        if func is not None:
            data["func"] = func
        target = data.get("func")
        if target is None or not callable(target):
            raise AgentConfigurationError(f"FunctionTool needs a function, got {target!r}")
        data.setdefault("name", getattr(target, "__name__", ""))
        data.setdefault("description", inspect.getdoc(target) or "")
        super().__init__(**data)

    @cached_property
    def _tool(self) -> Tool[Any]:
        return Tool(
            self.func,
            name=self.name,
            description=self.description or None,
            requires_approval=self.requires_approval,
        )

    @cached_property
    def _checked(self) -> Callable[..., Any]:
        return validate_call(self.func)

    @property
    def parameters(self) -> dict[str, Any]:
        return dict(self._tool.tool_def.parameters_json_schema)

    def pydantic_tool(self) -> Tool[Any]:
        return self._tool

    async def run(self, arguments: dict[str, Any]) -> Any:
        try:
            result = self._checked(**arguments)
        except ValidationError as error:
            raise WorkflowError(f"Tool '{self.name}': invalid arguments: {error}") from error
        if inspect.isawaitable(result):
            result = await result
        return result


def tool(
    func: Callable[..., Any] | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    requires_approval: bool = False,
) -> Any:
    """Make a ``FunctionTool``: ``tool(fn, requires_approval=True)``, ``@tool`` or ``@tool(...)``."""
    options: dict[str, Any] = {"requires_approval": requires_approval}
    if name is not None:
        options["name"] = name
    if description is not None:
        options["description"] = description

    def build(target: Callable[..., Any]) -> FunctionTool:
        return FunctionTool(target, **options)

    return build if func is None else build(func)


def as_tool(item: Any) -> BaseTool:
    """A tool from a ``BaseTool`` or a plain function."""
    if isinstance(item, BaseTool):
        return item
    if callable(item) and not isinstance(item, BaseNode):
        return FunctionTool(item)
    raise AgentConfigurationError(f"{item!r} is not a tool: give a function or a BaseTool")
