"""The questions a workflow's code declares, with their answer schemas, read without running it.

A question's ``response_schema`` is decided when a node asks it, so the API's answer endpoint
cannot know it from the path alone. What the code states is read here, the way the replay
check reads ``ctx.run_node`` calls (``engine.dynamic_calls``): every ``RequestInput(...)`` call
in the bodies of the workflow's nodes and of the children they start, whose
``response_schema=`` is a name (a pydantic model, a type, a dict) resolved through the
function's globals and closure or a literal, and whose ``interrupt_id=`` is a literal or an
f-string of names from the closure (``f"{who}-approval"``); an agent's tools that need approval
and the replies of a chat or task agent. Anything computed at run time is listed without a schema
(``schema`` None), and questions asked in code out of sight (a helper called with the context)
are not listed: a question's own ``response_schema`` always decides.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any

from engine import BaseNode, Workflow
from engine.agents import BaseTool, LlmAgent
from engine.agents.approval import answer_schema
from engine.agents.tools import as_tool
from engine.dynamic_calls import body_of, child_calls
from engine.nodes import ParallelWorker
from engine.values import json_schema

CHAT_REPLY = {"type": "string", "title": "Your reply (leave empty to end the conversation)"}


@dataclass(frozen=True, slots=True)
class DeclaredQuestion:
    """A question a node's code asks: its interrupt id (None: chosen at run time) and schema
    (None: computed at run time; ``{}``: any answer)."""

    node: str
    interrupt_id: str | None
    schema: dict[str, Any] | None


_read: dict[int, tuple[Workflow, list[DeclaredQuestion]]] = {}  # by workflow object: code is fixed


def declared_questions(workflow: Workflow) -> list[DeclaredQuestion]:
    """The questions of ``workflow`` that its code states, in graph order, each once."""
    known = _read.get(id(workflow))
    if known is None or known[0] is not workflow:
        known = _read[id(workflow)] = (workflow, _declared(workflow))
    return known[1]


def _declared(workflow: Workflow) -> list[DeclaredQuestion]:
    found: list[DeclaredQuestion] = []
    seen: set[int] = set()
    pending = list(workflow.graph.nodes.values())
    while pending:
        item = pending.pop(0)
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, Workflow):
            pending.extend(item.graph.nodes.values())
            continue
        if isinstance(item, ParallelWorker):
            pending.append(item.worker)
            continue
        found.extend(q for q in _asked_by(item) if q not in found)
        pending.extend(site.node for site in child_calls(item) or [] if site.node is not None)
    return found


def _asked_by(item: BaseNode) -> list[DeclaredQuestion]:
    if isinstance(item, LlmAgent):
        return _agent_questions(item)
    if isinstance(item, BaseTool):
        return [_approval(item.name, item)] if item.requires_approval else []
    func = body_of(item)
    return [] if func is None else _requests_in(item.name, func)


def _approval(node: str, tool: BaseTool) -> DeclaredQuestion:
    schema = answer_schema(tool.name, tool.parameters, {})
    schema["properties"]["arguments"].pop("default", None)  # the model's arguments: per call
    return DeclaredQuestion(node, None, schema)


def _agent_questions(agent: LlmAgent) -> list[DeclaredQuestion]:
    asked = [_approval(agent.name, t) for t in map(as_tool, agent.tools) if t.requires_approval]
    if agent.mode in ("chat", "task"):  # its text replies are questions to the user
        asked.append(DeclaredQuestion(agent.name, None, dict(CHAT_REPLY)))
    for sub in agent.sub_agents:
        asked.extend(_agent_questions(sub))
    return asked


def _requests_in(node: str, func: Any) -> list[DeclaredQuestion]:
    target = inspect.unwrap(func)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(target)))
    except (OSError, TypeError, SyntaxError):
        return []
    scope = dict(getattr(target, "__globals__", {}))
    try:
        scope.update(inspect.getclosurevars(target).nonlocals)
    except (TypeError, ValueError):
        pass  # no closure to read
    for name in _local_names(tree):  # a parameter or a variable of the body: known when it runs
        scope.pop(name, None)
    asked = []
    for call in ast.walk(tree):
        if isinstance(call, ast.Call) and _called_name(call.func) == "RequestInput":
            keywords = {k.arg: k.value for k in call.keywords if k.arg}
            asked.append(
                DeclaredQuestion(
                    node,
                    _text(keywords.get("interrupt_id"), scope),
                    _schema(keywords.get("response_schema"), scope),
                )
            )
    return asked


def _local_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for item in ast.walk(tree):
        if isinstance(item, ast.arg):
            names.add(item.arg)
        elif isinstance(item, ast.Name) and isinstance(item.ctx, ast.Store):
            names.add(item.id)
    return names


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    return func.attr if isinstance(func, ast.Attribute) else None


def _value(expression: ast.expr, scope: dict[str, Any]) -> Any:
    """A name or attribute chain from ``scope``, or a literal; ``LookupError`` otherwise."""
    chain: list[str] = []
    while isinstance(expression, ast.Attribute):
        chain.append(expression.attr)
        expression = expression.value
    if isinstance(expression, ast.Name):
        if expression.id not in scope:
            raise LookupError(expression.id)
        value = scope[expression.id]
        for attribute in reversed(chain):
            value = getattr(value, attribute)
        return value
    if chain:
        raise LookupError(ast.unparse(expression))
    try:
        return ast.literal_eval(expression)
    except ValueError:
        raise LookupError(ast.unparse(expression)) from None


def _schema(expression: ast.expr | None, scope: dict[str, Any]) -> dict[str, Any] | None:
    if expression is None:
        return {}  # no response_schema: any answer is taken
    try:
        return json_schema(_value(expression, scope)) or {}
    except Exception:  # computed in the body, or not a schema: known only when asked
        return None


def _text(expression: ast.expr | None, scope: dict[str, Any]) -> str | None:
    if isinstance(expression, ast.JoinedStr):
        parts = []
        for part in expression.values:
            if isinstance(part, ast.Constant):
                parts.append(str(part.value))
            elif isinstance(part, ast.FormattedValue) and part.conversion == -1 and part.format_spec is None:
                try:
                    value = _value(part.value, scope)
                except (LookupError, AttributeError):
                    return None
                if not isinstance(value, str | int):
                    return None
                parts.append(str(value))
            else:
                return None
        return "".join(parts)
    if expression is None:
        return None
    try:
        value = _value(expression, scope)
    except (LookupError, AttributeError):
        return None
    return value if isinstance(value, str) else None
