"""Bad input and faults in workers mode: misconfiguration, a job for a deleted run, a workflow
that is no longer registered."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.scaled.conftest import ROOT, Cluster, base_env


def _manage(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("command", [["wf", "worker"], ["serve", "--port", "0"]])
def test_workers_mode_on_sqlite_refuses_to_start_naming_database_url(command: list[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = base_env("", tmp_path, WFAPP_DATA_DIR=str(tmp_path))
    del env["DATABASE_URL"]
    _manage(env, "migrate", "-v0")
    done = _manage(env, *command)
    assert done.returncode != 0
    assert "WFAPP_RUNTIME=workers needs PostgreSQL: set DATABASE_URL=postgres://" in done.stderr


def test_a_worker_refuses_to_start_in_embedded_mode(cluster: Cluster) -> None:
    done = cluster.manage("wf", "worker", WFAPP_RUNTIME="embedded")
    assert done.returncode != 0
    assert "Worker processes need WFAPP_RUNTIME=workers" in done.stderr


def test_a_job_for_a_deleted_run_ends_and_writes_nothing(cluster: Cluster) -> None:
    assert cluster.drive("defer", "gone0000000000000000000000000000") is True
    cluster.worker(concurrency=2)
    cluster.wait_for(
        lambda: "run gone0000000000000000000000000000 no longer exists" in cluster.logs(), "the job to run"
    )
    assert cluster.sql("SELECT count(*) FROM wfapp_session")[0][0] == 0
    assert cluster.sql("SELECT count(*) FROM wfapp_event")[0][0] == 0
    cluster.wait_for(
        lambda: (
            cluster.sql("SELECT count(*) FROM procrastinate_jobs WHERE task_name = 'wfapp.advance_run'")
            == [(0,)]
        ),
        "the job to end (succeeded jobs are deleted)",
    )


def test_a_run_whose_workflow_is_no_longer_registered_fails_naming_it(cluster: Cluster) -> None:
    cluster.drive("operator", "olga", "olga-pass-123")
    first = cluster.worker(concurrency=2)
    (run,) = cluster.drive("start", "review", "1")
    cluster.wait_for(
        lambda: cluster.sql("SELECT status FROM wfapp_session WHERE id = %s", run) == [("waiting",)],
        "the question",
    )
    first.terminate()
    assert first.wait(timeout=60) == 0
    cluster.drive("answer-pending", "olga")  # recorded by a process that still knows the workflow
    cluster.worker(concurrency=2, WFAPP_EXTRA_WORKFLOWS="tests.scaled.flows:chain")  # one that does not
    cluster.wait_for(
        lambda: cluster.sql("SELECT status FROM wfapp_session WHERE id = %s", run) == [("failed",)],
        "the run to fail",
    )
    report = json.loads(cluster.manage("wf", "show", run).stdout)
    assert report["status"] == "failed"
    assert report["error"]["type"] == "UnknownWorkflowError"
    assert "'review'" in report["error"]["message"] and "not registered" in report["error"]["message"]
    kinds = [
        kind
        for (kind,) in cluster.sql("SELECT kind FROM wfapp_event WHERE session_id = %s ORDER BY seq", run)
    ]
    assert kinds[-2:] == ["error", "status"]


def test_a_start_defers_its_job_in_its_own_transaction(cluster: Cluster) -> None:
    jobs = "SELECT count(*) FROM procrastinate_jobs WHERE args->>'session_id' = %s"
    kept = cluster.drive("start-in-transaction", "chain", "commit")
    assert cluster.sql("SELECT count(*) FROM wfapp_session WHERE id = %s", kept) == [(1,)]
    assert cluster.sql(jobs, kept) == [(1,)]
    dropped = cluster.drive("start-in-transaction", "chain", "rollback")
    assert cluster.sql("SELECT count(*) FROM wfapp_session WHERE id = %s", dropped) == [(0,)]
    assert cluster.sql(jobs, dropped) == [(0,)]
