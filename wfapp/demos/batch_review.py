"""``batch_review``: a parallel worker reviews each item; flagged items ask a human.

Unflagged items pass automatically. The output lists every item's outcome in input order.
Interrupt ids are ``item-<index>-<sku>`` so answers can be given item by item.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any

from pydantic import BaseModel, Field, WithJsonSchema

from engine import START, Context, RequestInput, Workflow, node


class Item(BaseModel):
    sku: str = Field(min_length=1)
    # A number or its text (the form sends the text typed, so 12.50 stays 12.50).
    price: Annotated[
        Decimal,
        Field(ge=0),
        WithJsonSchema(
            {
                "anyOf": [{"type": "number", "minimum": 0}, {"type": "string", "pattern": r"^\d+(\.\d+)?$"}],
                "title": "Price",
            }
        ),
    ]
    flagged: bool = False


class Batch(BaseModel):
    items: list[Item]


class ItemDecision(BaseModel):
    approve: bool


def split(node_input: Batch) -> list[dict[str, Any]]:
    """Number the items so that each interrupt id is unique even when SKUs repeat."""
    return [
        {"index": index, **item.model_dump(mode="json")} for index, item in enumerate(node_input.items, 1)
    ]


@node(name="review_item", parallel_worker=True, rerun_on_resume=True)
async def review_item(ctx: Context, node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    item = {key: node_input[key] for key in ("sku", "price", "flagged")}
    if not node_input["flagged"]:
        yield {**item, "outcome": "passed", "decided_by": "policy"}
        return
    key = f"item-{node_input['index']}-{node_input['sku']}"
    if key in ctx.resume_inputs:
        decision = ItemDecision.model_validate(ctx.resume_inputs[key])
        yield {**item, "outcome": "approved" if decision.approve else "rejected", "decided_by": "reviewer"}
        return
    yield RequestInput(
        interrupt_id=key,
        message=f"Item {node_input['sku']} (price {node_input['price']}) was flagged: approve it?",
        payload=item,
        response_schema=ItemDecision,
    )


def summarize(node_input: list[dict[str, Any]]) -> dict[str, Any]:
    counts: dict[str, int] = {}
    for outcome in node_input:
        counts[outcome["outcome"]] = counts.get(outcome["outcome"], 0) + 1
    return {"items": node_input, "counts": counts}


batch_review = Workflow(
    name="batch_review",
    description="Review a batch of items in parallel: flagged items need a human decision, the rest pass.",
    edges=[(START, node(split, name="split"), review_item, node(summarize, name="summarize"))],
)
