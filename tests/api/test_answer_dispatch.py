"""An answer's 200 or 202 follows how the runtime dispatched the run's next turn.

Embedded: the serving process's runtime takes the answer up; 200 once that turn settled the run
(the response shows it), 202 when the turn is still going after the wait. Workers mode: the
answer defers an advance job in its own transaction, so the answer is 202 and a worker's job
advances the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User
from django.db import connection

from tests.api.conftest import Api, workers_mode
from tests.api.flows import PATH
from tests.wfapp.helpers import settled
from wfapp.api import live
from wfapp.worker.process import running_worker

__all__ = ["workers_mode"]  # the fixture


@pytest.fixture
def ask_then_wait(settings: Any, workflows: None) -> Iterator[None]:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, PATH]
    yield


async def _start(api: Api, workflow: str, node_input: Any) -> dict[str, Any]:
    started = await api.post(f"workflows/{workflow}/runs", {"input": node_input})
    assert started.status_code == 201, started.content
    await settled(started.json()["id"], "waiting")
    return dict((await api.get(f"runs/{started.json()['id']}")).json())


async def test_an_answer_whose_turn_settles_here_is_200_with_the_settled_run(
    engine_runtime: Any, as_alice: Api, as_bob: Api
) -> None:
    run = await _start(as_bob, "approval", {"n": 1})  # alice answers: not her own run (four-eyes)
    [question] = run["pending"]
    answered = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code == 200, answered.content
    assert answered.json()["run"]["status"] == "completed"
    assert answered.json()["run"]["output"] == {"approved": True}


async def test_an_answer_whose_turn_is_still_going_is_202(
    engine_runtime: Any,
    ask_then_wait: None,
    test_dir: Path,
    as_alice: Api,
    as_bob: Api,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(live, "SETTLE_WAIT", 0.3)
    run = await _start(as_bob, "ask_then_wait", {"n": 2})
    [question] = run["pending"]
    answered = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code == 202, answered.content
    assert answered.json()["question"]["status"] == "answered"
    assert answered.json()["run"]["status"] == "running"  # its next step waits for the file
    (test_dir / "release").touch()
    assert (await settled(run["id"], "completed")).output == {"approved": True}


def _advance_jobs(session_id: str) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT status FROM procrastinate_jobs WHERE task_name = 'wfapp.advance_run' "
            "AND args->>'session_id' = %s ORDER BY id",
            [session_id],
        )
        return [row[0] for row in cursor.fetchall()]


async def test_workers_mode_an_answer_defers_a_job_and_is_202(
    workers_mode: None, alice: User, as_alice: Api, as_bob: Api
) -> None:
    async with running_worker():
        run = await _start(as_bob, "approval", {"n": 3})
    [question] = run["pending"]
    # No worker now: the answer's job waits in the queue, committed with the answer.
    answered = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code == 202, answered.content
    assert answered.json()["question"]["status"] == "answered"
    assert answered.json()["run"]["status"] == "waiting" and answered.json()["run"]["pending"] == []
    assert await sync_to_async(_advance_jobs)(run["id"]) == ["todo"]
    async with running_worker():
        done = await settled(run["id"], "completed")
    assert done.output == {"approved": True}
