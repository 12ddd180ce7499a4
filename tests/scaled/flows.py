"""Workflows the scaled-mode tests run in worker processes.

Every node records each execution as a line (its start time) appended to ``<run>.<node path>``
under ``WFAPP_TEST_DIR``, so a test can tell how often and when each node of each run really
ran, whatever process ran it and however it died.
"""

from __future__ import annotations

import asyncio
import os
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from engine import START, Context, RequestInput, Workflow, node

STEPS = 6
PATHS = {name: f"tests.scaled.flows:{name}" for name in ("chain", "review", "timed")}


def executions_dir() -> Path:
    path = Path(os.environ["WFAPP_TEST_DIR"])
    path.mkdir(parents=True, exist_ok=True)
    return path


def record(ctx: Context) -> None:
    """Append this execution's start time (one line) to the node's file."""
    with open(executions_dir() / f"{ctx.session_id}.{ctx.node_path.replace('/', '_')}", "a") as handle:
        handle.write(f"{time.time():.6f}\n")


def execution_starts(session_id: str, node_path: str, directory: Path) -> list[float]:
    try:
        text = (directory / f"{session_id}.{node_path.replace('/', '_')}").read_text()
    except FileNotFoundError:
        return []
    return [float(line) for line in text.split()]


def executions(session_id: str, node_path: str, directory: Path) -> int:
    return len(execution_starts(session_id, node_path, directory))


def _step(index: int) -> Any:
    async def step(ctx: Context, node_input: dict[str, Any]) -> dict[str, Any]:
        record(ctx)
        await asyncio.sleep(float(node_input.get("pause", 0.0)))
        return {**node_input, "done": [*node_input.get("done", []), index], "by": os.getpid()}

    step.__name__ = f"step{index}"
    return node(step, name=f"step{index}")


chain = Workflow(name="chain", edges=[(START, *[_step(i) for i in range(STEPS)])])


class Verdict(BaseModel):
    approved: bool


def prepare(ctx: Context, node_input: dict[str, Any]) -> dict[str, Any]:
    record(ctx)
    return node_input


@node(rerun_on_resume=False)
async def decide(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="verdict", message="Approve?", payload=node_input, response_schema=Verdict
    )


def conclude(ctx: Context, node_input: Any) -> dict[str, Any]:
    record(ctx)
    approved = node_input.approved if isinstance(node_input, Verdict) else node_input["approved"]
    return {"approved": approved}


review = Workflow(name="review", edges=[(START, prepare, decide, conclude)])


@node(rerun_on_resume=False)
async def decide_in_time(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id="verdict",
        message="Approve within a second?",
        response_schema=Verdict,
        timeout=timedelta(seconds=float(node_input.get("timeout", 1.0))),
        on_timeout={"approved": False},
    )


# A question with a deadline: nobody answers, the queue's periodic job records the default.
timed = Workflow(name="timed", edges=[(START, prepare, decide_in_time, conclude)])
