"""Workflows with human steps for the wfapp tests: assignees, deadlines and quorums from the input."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel

from engine import START, RequestInput, Workflow, node

PATHS = {name: f"tests.wfapp.human_flows:{name}" for name in ("assigned", "deadline", "quorum")}


class Decision(BaseModel):
    approved: bool
    comment: str = ""


def _asking(**fixed: Any) -> Any:
    async def ask(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
        human = {key: node_input[key] for key in ("assignees", "approvals_required") if key in node_input}
        if "due" in node_input:
            human |= {
                "deadline": datetime.fromisoformat(node_input["due"]),
                "on_timeout": node_input["default"],
            }
        yield RequestInput(
            interrupt_id="decide",
            message=f"Decide on {node_input.get('what', 'this')}",
            response_schema=Decision,
            **(human | fixed),
        )

    return node(ask, name="ask", rerun_on_resume=False)


def _done(node_input: Any) -> Any:
    return node_input


assigned = Workflow(name="assigned", edges=[(START, _asking(), node(_done, name="done"))])
deadline = Workflow(name="deadline", edges=[(START, _asking(), node(_done, name="done"))])
quorum = Workflow(name="quorum", edges=[(START, _asking(exclude_requester=True), node(_done, name="done"))])
