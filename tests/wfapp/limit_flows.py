"""Workflows for the limit tests: free-form input and answers, and a node whose output nests."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine import START, RequestInput, Workflow, node

PATHS = {name: f"tests.wfapp.limit_flows:{name}" for name in ("freeform", "nesting")}

FREE_ANSWER = {"type": "object", "properties": {"note": {"type": "string"}, "data": {}}, "required": ["note"]}


class Notes(BaseModel):
    title: str
    data: dict[str, Any] = {}


@node(rerun_on_resume=False)
async def ask_free(node_input: Notes):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="free", message=f"Notes on {node_input.title}?", response_schema=FREE_ANSWER
    )


def keep(node_input: Any) -> Any:
    return node_input


freeform = Workflow(name="freeform", edges=[(START, ask_free, keep)])


def nest(depth: int) -> Any:
    """A list nested ``depth`` levels deep (``[]`` is one level)."""
    value: Any = []
    for _ in range(depth - 1):
        value = [value]
    return value


def nested_output(node_input: dict[str, Any]) -> Any:
    return {"deep": nest(int(node_input["depth"]))}


nesting = Workflow(name="nesting", edges=[(START, node(nested_output, name="make"))])
