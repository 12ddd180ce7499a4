"""SIGTERM drains a worker: its turns stop at a node boundary and are handed back at once."""

from __future__ import annotations

import signal

from tests.scaled.conftest import Cluster, check_logs
from tests.scaled.flows import STEPS, executions

RUNS = 6


def test_sigterm_cuts_turns_at_a_node_boundary_and_hands_them_back(cluster: Cluster) -> None:
    grace = float(cluster.env["WFAPP_WORKER_GRACE_SECONDS"])
    draining = cluster.worker(concurrency=RUNS)
    # Six steps of 1.5 s: longer than the grace, so a turn cannot simply finish; a step is
    # always executing when the signal comes.
    runs: list[str] = cluster.drive("start", "chain", str(RUNS), '{"pause": 1.5}')
    cluster.wait_for(
        lambda: all(executions(run, "chain@1/step1@1", cluster.test_dir) == 1 for run in runs),
        "every run to be in its second step",
    )
    draining.send_signal(signal.SIGTERM)
    assert draining.wait(timeout=grace + 15) == 0  # not the hard exit at grace + 10 s (status 70)
    # Handed back: no lease held, a job waiting for each run that is not done.
    open_runs = cluster.sql("SELECT id, lease_owner FROM wfapp_session WHERE status != 'completed'")
    assert {run for run, _ in open_runs} == set(runs)
    assert all(owner is None for _, owner in open_runs), open_runs
    queued = cluster.sql(
        "SELECT args->>'session_id' FROM procrastinate_jobs WHERE task_name = 'wfapp.advance_run' "
        "AND status = 'todo'"
    )
    assert sorted(run for (run,) in queued) == sorted(runs)
    # Cut at a node boundary: the steps executing at the signal finished and were recorded.
    completed = dict(
        cluster.sql(
            "SELECT session_id, count(*) FROM wfapp_event WHERE kind = 'completed' "
            "AND node_path LIKE '%%/step%%' GROUP BY 1"
        )
    )
    assert all(completed[run] >= 2 for run in runs), completed
    cluster.worker(concurrency=RUNS)
    cluster.wait_for(
        lambda: (
            cluster.sql(
                "SELECT count(*) FROM wfapp_session WHERE status = 'completed' AND lease_owner IS NULL"
            )[0][0]
            == RUNS
        ),
        "another worker to finish the runs",
    )
    check_logs(cluster, runs)
    # No step was cut short: each ran exactly once, across both workers.
    counts = {
        (run, i): executions(run, f"chain@1/step{i}@1", cluster.test_dir)
        for run in runs
        for i in range(STEPS)
    }
    assert set(counts.values()) == {1}, counts
    log = (cluster.test_dir / "worker-0.log").read_text()
    assert f"{RUNS} runs cut at a node boundary, handed back" in log, log[-2000:]
