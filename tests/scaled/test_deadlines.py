"""Deadlines in workers mode: the queue's periodic job (``wfapp.deadlines``) answers a question
nobody answered with its default, exactly once, while two worker processes both run the job."""

from __future__ import annotations

import json

from tests.scaled.conftest import Cluster, check_logs
from tests.scaled.flows import executions


def test_a_deadline_answers_once_with_its_default_while_two_workers_run_the_job(cluster: Cluster) -> None:
    cluster.worker(concurrency=4)
    cluster.worker(concurrency=4)
    runs = cluster.drive("start", "timed", "3", json.dumps({"timeout": 1.0}))
    cluster.wait_for(
        lambda: (
            cluster.sql(
                "SELECT count(*) FROM wfapp_session WHERE id = ANY(%s) AND status = 'completed'", runs
            )
            == [(3,)]
        ),
        "the deadlines to answer and the runs to complete",
        timeout=180,
    )
    check_logs(cluster, runs)
    answers = cluster.sql(
        "SELECT session_id, data FROM wfapp_event WHERE kind = 'answer' AND session_id = ANY(%s)", runs
    )
    assert sorted(run for run, _ in answers) == sorted(runs)  # one answer per run, no second one
    assert {data["answer"]["actor"] for _, data in answers} == {"deadline"}
    assert all(data["answer"]["value"] == {"approved": False} for _, data in answers)
    outputs = cluster.sql("SELECT output FROM wfapp_session WHERE id = ANY(%s)", runs)
    assert outputs == [({"approved": False},)] * 3
    assert all(executions(run, "timed@1/conclude@1", cluster.test_dir) == 1 for run in runs)
    rows = cluster.sql("SELECT status, answered_by FROM wfapp_interrupt WHERE session_id = ANY(%s)", runs)
    assert rows == [("answered", "deadline")] * 3
