"""Benchmark-only workflows the dashboard benchmark registers in the server it starts.

The server gets them through ``WFAPP_EXTRA_WORKFLOWS`` (never among the product's demos):

- ``bench_push``: asks one go-ahead question (so the client's websocket is surely listening
  before anything is measured), then one node emits ``events`` state events, one every
  ``pause_ms`` milliseconds, each committed on its own.
- ``bench_ask``: one yes/no question, then a trivial last step: what is left after the answer
  is the engine's resume, one function node and the completion.

With ``WFAPP_BENCH_COMMIT_LOG`` set, importing this module also records, in that file, the
moment each commit's doorbell is about to ring (session, seq, ``time.time()``): the commit is
done by then, so frame arrival minus that moment is the commit-to-frame latency proper.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

from pydantic import BaseModel

from engine import START, Event, FunctionNode, RequestInput, Workflow


class PushInput(BaseModel):
    events: int = 200
    pause_ms: int = 20


class AskInput(BaseModel):
    label: str = "bench"


class Go(BaseModel):
    approved: bool


def configure(node_input: PushInput) -> Event:
    return Event(output=node_input.model_dump(), state=node_input.model_dump())


async def ask_go_ahead(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="go", message="Start pushing events?", response_schema=Go)


async def emit(node_input: Any, events: int, pause_ms: int):  # type: ignore[no-untyped-def]
    for i in range(1, events + 1):
        await asyncio.sleep(pause_ms / 1000)
        yield Event(state={"pushed": i})


async def ask_decision(node_input: AskInput):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="decide", message=f"Approve {node_input.label}?", response_schema=Go)


def finish(node_input: dict[str, Any]) -> str:
    return "approved" if node_input.get("approved") else "rejected"


go_ahead = FunctionNode(ask_go_ahead, name="go_ahead", rerun_on_resume=False)
decide = FunctionNode(ask_decision, name="decide", rerun_on_resume=False)
bench_push = Workflow(name="bench_push", edges=[(START, configure, go_ahead, emit)])
bench_ask = Workflow(name="bench_ask", edges=[(START, decide, finish)])


def _record_commits(path: str) -> None:
    """Wrap the doorbell so each ring first notes (session, seq, now) in `path`."""
    from wfapp.store import doorbell

    ring = doorbell.ring
    log = open(path, "a", buffering=1)  # open for the server's lifetime

    async def timed_ring(session_id: str, seq: int, **kwargs: Any) -> None:
        log.write(f"{session_id} {seq} {time.time():.6f}\n")
        await ring(session_id, seq, **kwargs)

    doorbell.ring = timed_ring


if os.environ.get("WFAPP_BENCH_COMMIT_LOG"):
    _record_commits(os.environ["WFAPP_BENCH_COMMIT_LOG"])
