"""Workflows only the dashboard tests register: one that fails, with HTML in its error, and others."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import START, RequestInput, Workflow, node


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
