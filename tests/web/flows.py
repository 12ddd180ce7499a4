"""Workflows only the dashboard tests register: one that fails, with HTML in its error, and others."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from engine import START, Context, LlmAgent, RequestInput, Workflow, node


def fragile(node_input: Any) -> Any:
    raise RuntimeError("<img src=x onerror=alert(1)> the ledger is locked")


broken = Workflow(name="web_broken", edges=[(START, node(fragile, name="post_to_ledger"))])


def post_when_unlocked(node_input: dict[str, Any]) -> dict[str, Any]:
    """Fail until the file named by the input exists: a failure an operator can fix, then retry."""
    if not Path(node_input["unlock_file"]).exists():
        raise RuntimeError("the ledger is locked")
    return {"posted": True}


locked_ledger = Workflow(
    name="web_locked_ledger", edges=[(START, node(post_when_unlocked, name="post_to_ledger"))]
)


def reconcile(node_input: Any) -> Any:
    return node_input


# A fan-out wider than the graph shows at once, with child labels too long for their box.
wide_fanout = Workflow(
    name="web_wide_fanout",
    edges=[(START, node(reconcile, name="reconcile_supplier_invoice_lines_for_q3", parallel_worker=True))],
)


@node(rerun_on_resume=False)
async def ask_for_a_note(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="note", message="Write the note", response_schema={"type": "string"})


# A question answered with free text: no Approve / Reject, so never answered in bulk.
free_text = Workflow(name="web_free_text", edges=[(START, ask_for_a_note, reconcile)])


async def _opened(gate: Path) -> None:
    while not gate.exists():  # the test opens each gate when it is ready to watch the next piece
        await asyncio.sleep(0.02)


async def _gated_story(messages: list[Any], info: Any) -> AsyncIterator[str]:
    """Streams one piece per gate file the test creates (``<gates>/0``, ``/1``, ...)."""
    gates = Path(json.loads(messages[-1].parts[-1].content)["gates"])
    for number, piece in enumerate(STORY):
        await _opened(gates / str(number))
        yield piece


@node(rerun_on_resume=True)
async def go_ahead(ctx: Context, node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    """Ask before the agent begins, so the server (not whoever started the run) runs the agent."""
    if "go" not in ctx.resume_inputs:
        yield RequestInput(
            interrupt_id="go", message="Let the narrator begin?", response_schema={"type": "boolean"}
        )
        return
    yield node_input


STORY = ["Once ", "upon ", "a <time>."]
# An agent whose model streams its answer piece by piece, as the test lets it.
streaming = Workflow(
    name="web_streaming",
    edges=[
        (
            START,
            go_ahead,
            LlmAgent(
                name="narrator",
                model=FunctionModel(stream_function=_gated_story, model_name="gated"),
                instruction="Tell a story.",
            ),
        )
    ],
)


def _desk(messages: list[Any], info: Any) -> ModelResponse:
    """The front desk: hands a new ticket to billing, answers once it comes back."""
    if not any(m.kind == "response" for m in messages):
        return ModelResponse(parts=[ToolCallPart("transfer_to_agent", {"agent_name": "billing"})])
    return ModelResponse(parts=[TextPart("Back at the desk: it was not about money.")])


def _billing(messages: list[Any], info: Any) -> ModelResponse:
    return ModelResponse(parts=[ToolCallPart("transfer_to_agent", {"agent_name": "desk"})])


# An agent that hands the conversation to a sub-agent, which hands it back.
transfer = Workflow(
    name="web_transfer",
    edges=[
        (
            START,
            LlmAgent(
                name="desk",
                model=FunctionModel(_desk, model_name="desk"),
                sub_agents=[LlmAgent(name="billing", model=FunctionModel(_billing, model_name="billing"))],
            ),
        )
    ],
)
