"""The Django store keeps a run's output once in the log; Session.output still shows it."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async

from engine import START, Runner, Workflow
from engine.testing import stamp
from wfapp.models import Event as EventRow
from wfapp.models import Session
from wfapp.runs.reports import run_report
from wfapp.store.events import DjangoEventStore

BIG = {"rows": ["r" * 50] * 2_000}


def make(node_input: Any) -> dict[str, Any]:
    return BIG


def tail(node_input: Any) -> dict[str, Any]:
    return {"wrapped": node_input}


@pytest.mark.parametrize("own_thread", [False, True])
async def test_a_completed_run_stores_its_output_once_and_projects_it(
    transactional_db: None, own_thread: bool
) -> None:
    runner = Runner(
        Workflow(name="wf", edges=[(START, make, tail)]), store=DjangoEventStore(own_thread=own_thread)
    )
    result = await runner.run()

    assert result.output == {"wrapped": BIG}
    rows = await sync_to_async(lambda: list(EventRow.objects.filter(session_id=result.session_id)))()
    [status] = [row for row in rows if row.kind == "status"]
    assert "output" not in status.data
    carrier = next(row for row in rows if row.seq == status.data["output_seq"])
    assert carrier.node_path == "wf@1/tail@1" and carrier.data["output"] == {"wrapped": BIG}
    # BIG itself is in the log twice (make's output, then inside tail's), never a third time.
    assert sum(len(str(row.data)) for row in rows) < 2.2 * len(str(BIG))
    session = await Session.objects.aget(pk=result.session_id)
    assert session.output == {"wrapped": BIG}
    report = await sync_to_async(run_report)(result.session_id)
    assert report["output"] == {"wrapped": BIG}
    assert (await runner.result(result.session_id)).output == {"wrapped": BIG}


async def test_a_status_pointing_at_an_earlier_append_reads_the_output_there(transactional_db: None) -> None:
    store = DjangoEventStore()
    await store.create_session("s", "wf", None)
    done = [
        {"kind": "completed", "node_path": "wf@1/a@1", "output": [1, 2], "output_for": ["wf@1/a@1", "wf@1"]}
    ]
    await store.append("s", stamp("s", 1, done), expected_seq=0)
    finished = [{"kind": "status", "node_path": "wf@1", "status": "completed", "output_seq": 1}]
    await store.append("s", stamp("s", 2, finished), expected_seq=1)

    assert (await Session.objects.aget(pk="s")).output == [1, 2]
