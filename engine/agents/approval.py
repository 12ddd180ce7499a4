"""Asking a person to approve a tool call, and reading their answer.

The question's payload carries the tool name and arguments; its answer is
``{"approved": true}``, ``{"approved": false, "reason": "..."}`` or
``{"approved": true, "arguments": {...}}`` (edited arguments, checked against the tool's
parameter schema before the answer is accepted).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import ToolApproved, ToolDenied

from ..events import RequestInput


def answer_schema(tool: str, parameters: dict[str, Any], arguments: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of an approval answer; the arguments default to the model's."""
    schema = {key: value for key, value in parameters.items() if key != "$defs"}
    edited = {**schema, "title": "Arguments", "default": arguments}
    answer: dict[str, Any] = {
        "type": "object",
        "title": f"Approve the call to {tool}",
        "properties": {
            "approved": {"type": "boolean", "title": "Approve this call"},
            "reason": {"type": "string", "title": "Reason (told to the model when you reject)"},
            "arguments": edited,
        },
        "required": ["approved"],
        "additionalProperties": False,
    }
    if "$defs" in parameters:
        answer["$defs"] = parameters["$defs"]
    return answer


def approval_request(
    tool: str,
    parameters: dict[str, Any],
    arguments: dict[str, Any],
    *,
    agent: str | None,
    call_id: str | None = None,
) -> RequestInput:
    """The question that pauses the run until someone approves, rejects or edits the call.

    An agent's question names the model's ``tool_call_id`` too: an answer is bound to one call.
    """
    arguments = _in_order(arguments, parameters)
    shown = json.dumps(arguments, ensure_ascii=False, default=str)
    who = f"Agent '{agent}' wants" if agent else "The workflow wants"
    payload: dict[str, Any] = {"kind": "tool_approval", "agent": agent, "tool": tool, "arguments": arguments}
    if call_id is not None:
        payload["tool_call_id"] = call_id
    return RequestInput(
        message=f"{who} to call {tool}({shown}). Approve?",
        payload=payload,
        response_schema=answer_schema(tool, parameters, arguments),
    )


def _in_order(arguments: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    """The arguments in the order the tool declares them (then by name), whatever order the
    log gave them back in (PostgreSQL's jsonb reorders keys): the question reads the same."""
    declared = list(parameters.get("properties", {}))
    rank = {name: position for position, name in enumerate(declared)}
    return dict(sorted(arguments.items(), key=lambda item: (rank.get(item[0], len(rank)), item[0])))


def approved_arguments(answer: Any, arguments: dict[str, Any]) -> tuple[dict[str, Any] | None, str]:
    """The arguments to call with (None when rejected) and the rejection reason."""
    if isinstance(answer, dict) and answer.get("approved") is True:
        edited = answer.get("arguments")
        return (edited if isinstance(edited, dict) else arguments), ""
    reason = str(answer.get("reason") or "") if isinstance(answer, dict) else ""
    return None, reason


def approval_result(answer: Any, arguments: dict[str, Any]) -> ToolApproved | ToolDenied:
    """The answer as pydantic-ai's deferred tool result."""
    chosen, reason = approved_arguments(answer, arguments)
    if chosen is None:
        said = f": {reason}" if reason else ""
        return ToolDenied(f"A person rejected this call{said}. Do not call it again with the same arguments.")
    return ToolApproved(override_args=chosen if chosen != arguments else None)
