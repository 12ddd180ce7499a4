"""Workflows only the dashboard tests register: ones that fail (with HTML in the error, on a
large order, in one branch of a fan-out, in one dynamic child), and others."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field
from pydantic_ai import ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import FunctionModel

from engine import START, Context, Event, JoinNode, LlmAgent, RequestInput, Workflow, node


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


class Order(BaseModel):
    sku: str
    quantity: int = Field(ge=1)


def post_order(order: Order) -> dict[str, Any]:
    """Fail on large orders: an operator retries with a smaller quantity (the start input)."""
    if order.quantity > 10:
        raise RuntimeError(f"the ledger refuses {order.quantity} of {order.sku}")
    return {"posted": order.sku, "quantity": order.quantity}


orders = Workflow(name="web_orders", edges=[(START, node(post_order, name="post_order"))])


def post_adjusting_entries(node_input: Any) -> Any:
    raise RuntimeError("the period is closed")


# A failure deep in nested workflows: its node path is over 100 characters, shown whole.
close_subsidiary_ledgers = Workflow(
    name="close_subsidiary_ledgers_for_the_quarter",
    edges=[(START, node(post_adjusting_entries, name="post_adjusting_entries_to_the_general_ledger"))],
)
quarter_end = Workflow(name="web_quarter_end_close", edges=[(START, close_subsidiary_ledgers)])


def prepare(node_input: dict[str, Any]) -> dict[str, Any]:
    return {"region": node_input.get("region", "north"), "fixed": False}


def count_stock(node_input: dict[str, Any]) -> dict[str, Any]:
    return {"counted": node_input["region"]}


def price_stock(node_input: dict[str, Any]) -> dict[str, Any]:
    """Fails on what ``prepare`` gives it until an operator edits its input to say ``fixed``."""
    if not node_input.get("fixed"):
        raise ValueError(f"no price list for {node_input['region']}")
    return {"priced": node_input["region"]}


def report_stock(node_input: dict[str, Any]) -> dict[str, Any]:
    return dict(node_input)


# A fan-out where one branch fails while the other completes, then a join.
stock_take = Workflow(
    name="web_stock_take",
    edges=[(START, prepare, (count_stock, price_stock), JoinNode(name="both"), report_stock)],
)


def fetch_item(item: int) -> int:
    if item < 0:
        raise ValueError(f"no such item {item}")
    return item * 2


@node(rerun_on_resume=True)
async def collect_items(ctx: Context, items: list[int]) -> list[int]:
    return list(await asyncio.gather(*(ctx.run_node(fetch_item, item) for item in items)))


# A dynamic workflow whose parallel children fail one by one on a bad item.
collect = Workflow(name="web_collect", edges=[(START, collect_items)])


def count_in(node_input: Any) -> Event:
    return Event(output={"counted": 1}, state={"count": 1, "items": ["apple"], "owner": "ann"})


def count_more(node_input: Any) -> Event:
    return Event(output={"counted": 2}, state={"count": 2, "items": ["apple", "pear"], "checked": True})


# State that grows step by step, for comparing the run as of two events.
tally = Workflow(name="web_tally", edges=[(START, count_in, count_more)])


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


@node(rerun_on_resume=False)
async def ask_to_pay(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="pay",
        message=f"Pay {node_input['what']}?",
        response_schema={
            "type": "object",
            "properties": {"approved": {"type": "boolean"}},
            "required": ["approved"],
        },
    )


def book_payment(node_input: dict[str, Any]) -> dict[str, Any]:
    """Fails until the file named by the input exists (an operator fixes it, then retries)."""
    if not Path(node_input["unlock_file"]).exists():
        raise RuntimeError("the ledger is locked")
    return {"booked": node_input["what"]}


# A question beside a branch that fails: the run fails while the question still waits.
pay_beside_ledger = Workflow(
    name="web_pay_beside_ledger",
    edges=[(START, (ask_to_pay, node(book_payment, name="book_payment")), JoinNode(name="both"))],
)
