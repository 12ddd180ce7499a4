"""Many runs progress at once in one runtime: runs that wait for each other all complete."""

from __future__ import annotations

import asyncio

from tests.wfapp.helpers import settled
from wfapp.runs import starting
from wfapp.runs.runtime import Runtime

RUNS = 8


async def test_runs_that_rendezvous_all_complete(engine_runtime: Runtime) -> None:
    ids = [await starting.start_run("rendezvous", {"group": "g1", "size": RUNS}) for _ in range(RUNS)]
    sessions = await asyncio.gather(*(settled(session_id, "completed", "failed") for session_id in ids))
    assert [(s.status, s.output) for s in sessions] == [("completed", {"met": RUNS})] * RUNS
