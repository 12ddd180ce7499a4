"""Workflows the wfapp tests register besides the demos.

Counters go to files under ``WFAPP_TEST_DIR`` (set by the tests) so that they survive the
serving subprocess being killed; ``count(name)`` reads them back.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine import START, Context, Event, JoinNode, RequestInput, Workflow, node

PATHS = {name: f"tests.wfapp.flows:{name}" for name in ("approval", "blocking", "rendezvous", "flaky")}


def _dir() -> Path:
    path = Path(os.environ.get("WFAPP_TEST_DIR") or Path(tempfile.gettempdir()) / "wfapp-tests")
    path.mkdir(parents=True, exist_ok=True)
    return path


def bump(name: str) -> None:
    """Count one execution of ``name`` (one byte appended to its file)."""
    with open(_dir() / f"{name}.count", "ab") as handle:
        handle.write(b".")


def count(name: str) -> int:
    try:
        return (_dir() / f"{name}.count").stat().st_size
    except FileNotFoundError:
        return 0


class Decision(BaseModel):
    approved: bool
    comment: str = ""


# -- approval: ask once, then finish (counts how often finish runs) --------------------------


def prepare(node_input: dict[str, Any]) -> dict[str, Any]:
    bump("approval.prepare")
    return node_input


@node(rerun_on_resume=False)
async def ask(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="ok", message=f"Approve {node_input}?", payload=node_input, response_schema=Decision
    )


def finish(node_input: dict[str, Any]) -> dict[str, Any]:
    bump("approval.finish")
    return {"approved": node_input["approved"]}


approval = Workflow(name="approval", edges=[(START, prepare, ask, finish)])


# -- blocking: the middle node waits for a file to appear --------------------------------------


def first(node_input: Any) -> Any:
    bump("blocking.first")
    return node_input


async def wait_for_file(node_input: Any) -> Any:
    bump("blocking.wait")
    release = _dir() / "release"
    while not release.exists():
        await asyncio.sleep(0.05)
    return node_input


def last(node_input: Any) -> Any:
    bump("blocking.last")
    return {"done": node_input}


blocking = Workflow(name="blocking", edges=[(START, first, wait_for_file, last)])


# -- rendezvous: every run waits until all runs of its group have arrived ------------------------

_arrived: dict[str, int] = {}


async def meet(node_input: dict[str, Any]) -> dict[str, Any]:
    group, size = node_input["group"], node_input["size"]
    _arrived[group] = _arrived.get(group, 0) + 1
    async with asyncio.timeout(20):
        while _arrived[group] < size:
            await asyncio.sleep(0.01)
    return {"met": size}


rendezvous = Workflow(name="rendezvous", edges=[(START, meet)])


# -- flaky: fails until a file exists, then succeeds ------------------------------------------------


def flaky_step(node_input: Any) -> Any:
    bump("flaky.step")
    if not (_dir() / "healthy").exists():
        raise RuntimeError("the downstream service is unavailable")
    return {"ok": node_input}


flaky = Workflow(name="flaky", edges=[(START, node(flaky_step, name="step"))])


# -- two_asks: two questions in parallel; the first answer's branch works slowly ------------------


@node(rerun_on_resume=False)
async def ask_a(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="a", message="A?", response_schema=Decision)


@node(rerun_on_resume=False)
async def ask_b(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="b", message="B?", response_schema=Decision)


async def slow_a(node_input: Any) -> Any:
    bump("two_asks.slow_a")
    (_dir() / "slow_a.started").touch()
    await asyncio.sleep(0.5)
    return node_input


def after_b(node_input: Any) -> Any:
    bump("two_asks.after_b")
    return node_input


slow_a_node = node(slow_a, name="slow_a")
after_b_node = node(after_b, name="after_b")
two_asks = Workflow(
    name="two_asks",
    edges=[
        (START, (ask_a, ask_b)),
        (ask_a, slow_a_node),
        (ask_b, after_b_node),
        ((slow_a_node, after_b_node), JoinNode(name="both")),
    ],
)
PATHS["two_asks"] = "tests.wfapp.flows:two_asks"


# -- payments: one interrupt id asked again for each payment (#1 of 10, then #2 of 99,999) ---------

AMOUNTS = (10, 99_999)


def next_payment(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
    number = int(ctx.state.get("paid", 0)) + 1
    yield Event(output={"number": number, "amount": AMOUNTS[number - 1]}, state={"paid": number})


@node(rerun_on_resume=False)
async def ask_payment(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="payment",
        message=f"Pay payment #{node_input['number']} of {node_input['amount']}?",
        payload=node_input,
        response_schema=Decision,
    )


def paid(ctx: Context, node_input: Any) -> Any:
    ctx.route = "more" if int(ctx.state.get("paid", 0)) < len(AMOUNTS) else "done"
    return node_input


def all_paid(node_input: Any) -> str:
    return "all paid"


payments = Workflow(
    name="payments",
    edges=[(START, next_payment, ask_payment, paid, {"more": next_payment, "done": all_paid})],
)
PATHS["payments"] = "tests.wfapp.flows:payments"


# -- booking: a person approves, then the booking fails (its input is that person's decision) -----


@node(rerun_on_resume=False)
async def approve_booking(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="booking", message="Book it?", response_schema=Decision)


def book(node_input: Decision) -> str:
    raise RuntimeError(f"the booking system is down (approved={node_input.approved})")


booking = Workflow(name="booking", edges=[(START, approve_booking, book)])
PATHS["booking"] = "tests.wfapp.flows:booking"
