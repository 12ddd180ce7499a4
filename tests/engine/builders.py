"""Small workflow builders shared by the dynamic-workflow tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

from engine import RequestInput, Workflow, node


def single(orchestrator: Any, name: str = "wf") -> Workflow:
    """A workflow whose only node is ``orchestrator``."""
    return Workflow(name=name, edges=[("START", orchestrator)])


def asker(calls: Counter[str], name: str, interrupt_id: str) -> Any:
    """A ``rerun_on_resume=False`` leaf that asks once; its answer becomes its output."""

    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        calls[name] += 1
        yield RequestInput(message=f"{name}?", interrupt_id=interrupt_id)

    return node(ask, name=name)
