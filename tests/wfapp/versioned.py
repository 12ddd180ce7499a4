"""Versions of one workflow, ``versioned``, for the tests of side-by-side deploys.

``v1`` and ``v2`` ask the same question and finish differently; ``v1_reordered`` keeps
version "1" but asks before it prepares, so logs recorded on ``v1`` no longer replay on it.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from engine import START, RequestInput, Workflow, node

PATHS = {name: f"tests.wfapp.versioned:{name}" for name in ("v1", "v2", "v1_reordered")}


def prepare(node_input: Any) -> Any:
    return node_input


@node(rerun_on_resume=False)
async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
    yield RequestInput(interrupt_id="ok", message="Go on?", response_schema={"type": "string"})


def finish_one(node_input: Any) -> str:
    return f"v1 finished with {node_input}"


def finish_two(node_input: Any) -> str:
    return f"v2 finished with {node_input}"


v1 = Workflow(name="versioned", version="1", edges=[(START, prepare, ask, node(finish_one, name="finish"))])
v2 = Workflow(name="versioned", version="2", edges=[(START, prepare, ask, node(finish_two, name="finish"))])
v1_reordered = Workflow(
    name="versioned", version="1", edges=[(START, ask, prepare, node(finish_one, name="finish"))]
)
