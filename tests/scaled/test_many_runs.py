"""200 runs of a mixed workload over 3 worker processes: all complete, nothing lost or doubled."""

from __future__ import annotations

from tests.scaled.conftest import Cluster, check_logs
from tests.scaled.flows import STEPS, execution_starts


def test_200_mixed_runs_over_three_workers_complete_gap_free_without_duplicates(cluster: Cluster) -> None:
    for _ in range(3):
        cluster.worker(concurrency=20)
    cluster.drive("operator", "olga", "olga-pass-123")
    chains: list[str] = cluster.drive("start", "chain", "150", '{"pause": 0.01}')
    reviews: list[str] = cluster.drive("start", "review", "50")
    cluster.wait_for(
        lambda: cluster.sql("SELECT count(*) FROM wfapp_interrupt WHERE status = 'pending'")[0][0] == 50,
        "the 50 reviews to wait for their answer",
    )
    answered = cluster.drive("answer-pending", "olga")
    assert sorted(answered) == sorted(reviews)
    runs = chains + reviews
    cluster.wait_for(
        lambda: (
            cluster.sql(
                "SELECT count(*) FROM wfapp_session WHERE status = 'completed' AND lease_owner IS NULL"
            )[0][0]
            == 200
        ),
        "all 200 runs to complete",
    )
    check_logs(cluster, runs)
    # No event lost: every node of every run completed once, and ran once.
    completed = cluster.sql(
        "SELECT session_id, count(*) FROM wfapp_event WHERE kind = 'completed' GROUP BY 1 ORDER BY 1"
    )
    expected = {run: STEPS + 1 for run in chains} | {run: 4 for run in reviews}  # nodes + the workflow
    assert dict(completed) == expected
    # Every node ran, and none started again once it had completed.
    done_at = {
        (run, path): at
        for run, path, at in cluster.sql(
            "SELECT session_id, node_path, timestamp FROM wfapp_event WHERE kind = 'completed'"
        )
    }
    paths = {run: [f"chain@1/step{i}@1" for i in range(STEPS)] for run in chains} | {
        run: ["review@1/prepare@1", "review@1/conclude@1"] for run in reviews
    }
    for run, nodes in paths.items():
        for path in nodes:
            starts = execution_starts(run, path, cluster.test_dir)
            assert starts and max(starts) <= done_at[run, path], (run, path, starts)
    answers = cluster.sql("SELECT count(*) FROM wfapp_event WHERE kind = 'answer'")[0][0]
    assert answers == 50
    assert cluster.sql("SELECT count(*) FROM procrastinate_workers")[0][0] == 3
