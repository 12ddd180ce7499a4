"""``support_triage``: an LLM support agent that looks orders up and refunds them with approval.

The agent (``support_agent``) reads the ticket, looks the order up and may propose a refund;
``issue_refund`` needs a person's approval, given (or refused, or edited) in the inbox. The
conversation then goes on and the agent writes the reply to the customer.

With no ``WFAPP_AGENT_MODEL`` set, the agent runs on a scripted model (no API key, no
network), and says so in the dashboard. Set ``WFAPP_AGENT_MODEL`` to a pydantic-ai model
string (``openai:gpt-5-mini``, ``anthropic:claude-sonnet-4-5``, ``google:gemini-flash-latest``,
``ollama:llama3.2``...) and the provider's key (``OPENAI_API_KEY``, ...) to use a real model.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import AsyncIterator
from typing import Any

from pydantic import BaseModel, Field
from pydantic_ai import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models import Model
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from engine import START, LlmAgent, Workflow, node, tool

SCRIPTED = "scripted model"
WORD_PAUSE = 0.03  # seconds between the scripted model's words as it streams

ORDERS: dict[str, dict[str, Any]] = {
    "A100": {"customer": "Ada", "item": "kettle", "total": 39.0, "status": "delivered damaged"},
    "A101": {"customer": "Ben", "item": "desk lamp", "total": 24.5, "status": "delivered"},
    "A102": {"customer": "Cy", "item": "blender", "total": 89.0, "status": "in transit"},
}


class Ticket(BaseModel):
    customer: str = Field(min_length=1)
    order_id: str = Field(min_length=1, description="A100, A101 or A102 in the demo data")
    message: str = Field(min_length=1)


def lookup_order(order_id: str) -> dict[str, Any]:
    """Look an order up by its id: item, total, delivery status."""
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return {"order_id": order_id, "found": False}
    return {"order_id": order_id, "found": True, **order}


@tool(requires_approval=True)
def issue_refund(order_id: str, amount: float, reason: str) -> str:
    """Refund ``amount`` on an order. A person must approve every refund."""
    return f"Refunded {amount:.2f} on order {order_id} ({reason})."


def _scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """A support agent that follows the book: look up, refund if damaged, reply."""
    steps = [m for m in messages if m.kind == "response"]
    last = messages[-1]
    if not steps:
        ticket = json.loads(str(getattr(last.parts[-1], "content", "{}")))
        return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": ticket["order_id"]})])
    returned: list[Any] = [p.content for p in last.parts if isinstance(p, ToolReturnPart)]
    if len(steps) == 1 and returned:
        order: dict[str, Any] = returned[0] if isinstance(returned[0], dict) else {}
        if order.get("found") and "damaged" in str(order.get("status")):
            arguments = {"order_id": order["order_id"], "amount": order["total"], "reason": "arrived damaged"}
            return ModelResponse(parts=[ToolCallPart("issue_refund", arguments)])
        found = "is on its way" if order.get("found") else "could not be found"
        return ModelResponse(parts=[TextPart(f"Thanks for writing. Your order {found}; no refund is due.")])
    said = " ".join(str(content) for content in returned)
    if "rejected" in said:
        why = re.sub(r"^A person rejected this call:?\s*", "", said).split(". Do not")[0]
        return ModelResponse(parts=[TextPart(f"Sorry, we cannot refund this order. {why}".strip())])
    return ModelResponse(parts=[TextPart(f"Good news: {said} We are sorry about the damage.")])


async def _streamed(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[str | DeltaToolCalls]:
    """The scripted answers as a model streams them: text a word at a time, so the run page shows it arrive."""
    for number, part in enumerate(_scripted(messages, info).parts):
        if isinstance(part, ToolCallPart):
            yield {number: DeltaToolCall(name=part.tool_name, json_args=part.args_as_json_str())}
        elif isinstance(part, TextPart):
            for word in re.findall(r"\S+\s*", part.content):
                await asyncio.sleep(WORD_PAUSE)
                yield word


def support_model() -> Model | str:
    """The model from ``WFAPP_AGENT_MODEL``, or the scripted one (streamed when someone watches)."""
    scripted = FunctionModel(_scripted, stream_function=_streamed, model_name=SCRIPTED)
    return os.environ.get("WFAPP_AGENT_MODEL") or scripted


support_agent = LlmAgent(
    name="support_agent",
    model=support_model(),
    description="Answers a support ticket; refunds need approval.",
    instruction=(
        "You are a support agent for a small shop. The customer is {customer}. Look up order "
        "{order_id} with lookup_order. If it arrived damaged, propose a refund of its total with "
        "issue_refund (a person approves it). Then write a short, kind reply to the customer."
    ),
    tools=[lookup_order, issue_refund],
    output_key="reply",
)


@node
def open_ticket(node_input: Ticket) -> dict[str, Any]:
    return node_input.model_dump()


@node
def close_ticket(node_input: str) -> dict[str, Any]:
    return {"reply": node_input, "closed": True}


support_triage = Workflow(
    name="support_triage",
    description=(
        "An LLM support agent looks the order up and may refund it; every refund needs approval. "
        + (
            "Runs on a scripted model (set WFAPP_AGENT_MODEL for a real one)."
            if not os.environ.get("WFAPP_AGENT_MODEL")
            else ""
        )
    ),
    edges=[(START, open_ticket, support_agent, close_ticket)],
)
