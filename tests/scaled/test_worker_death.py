"""Workers that die or freeze mid-run: their runs are taken up, nothing completed runs again."""

from __future__ import annotations

import json
import random
import signal
import subprocess
import time

from tests.scaled.conftest import Cluster, check_logs
from tests.scaled.flows import STEPS, execution_starts, executions

KILLS = 20


def _held_by(cluster: Cluster, pid: int) -> dict[str, int]:
    """The runs a worker process holds, with their last seq."""
    rows = cluster.sql(
        "SELECT id, last_seq FROM wfapp_session WHERE lease_owner LIKE %s AND status = 'running'",
        f"%:{pid}:%",
    )
    return dict(rows)


def _mid_run(cluster: Cluster, workers: list[subprocess.Popen[bytes]]) -> list[subprocess.Popen[bytes]]:
    """The live workers holding a run in flight."""
    return [w for w in workers if w.poll() is None and _held_by(cluster, w.pid)]


def _completed_nodes(cluster: Cluster) -> list[tuple[str, str, float]]:
    return cluster.sql(
        "SELECT session_id, node_path, timestamp FROM wfapp_event WHERE kind = 'completed' "
        "AND node_path LIKE '%%/step%%'"
    )


def test_kill_9_mid_run_twenty_times_loses_nothing_and_reruns_no_completed_node(cluster: Cluster) -> None:
    rng = random.Random(16)
    workers: list[subprocess.Popen[bytes]] = [cluster.worker(concurrency=8) for _ in range(3)]
    runs: list[str] = cluster.drive("start", "chain", "60", '{"pause": 0.15}')
    completed_before_a_kill: set[tuple[str, str, float]] = set()
    recoveries: list[float] = []
    for _ in range(KILLS):
        unfinished = cluster.sql("SELECT count(*) FROM wfapp_session WHERE status != 'completed'")[0][0]
        if unfinished < 20:
            runs += cluster.drive("start", "chain", "40", '{"pause": 0.15}')
        time.sleep(rng.uniform(0.1, 0.5))
        victims: list[subprocess.Popen[bytes]] = []

        def found(victims: list[subprocess.Popen[bytes]] = victims) -> bool:
            victims[:] = _mid_run(cluster, workers)
            return bool(victims)

        cluster.wait_for(found, "a worker in the middle of a run", timeout=60)
        victim = rng.choice(victims)
        victim.send_signal(signal.SIGKILL)
        victim.wait()
        killed_at = time.monotonic()
        held = _held_by(cluster, victim.pid)  # what it held when it died (it writes nothing now)
        completed_before_a_kill.update(_completed_nodes(cluster))
        workers.remove(victim)
        if sum(worker.poll() is None for worker in workers) < 2:
            workers.append(cluster.worker(concurrency=8))

        def recovered(held: dict[str, int] = held) -> bool:
            now = dict(cluster.sql("SELECT id, last_seq FROM wfapp_session WHERE id = ANY(%s)", list(held)))
            return all(now[run] > seq for run, seq in held.items())

        cluster.wait_for(
            recovered, f"the {len(held)} runs of killed worker {victim.pid} to be taken up", timeout=60
        )
        recoveries.append(time.monotonic() - killed_at)
    cluster.wait_for(
        lambda: (
            cluster.sql(
                "SELECT count(*) FROM wfapp_session WHERE status != 'completed' OR lease_owner IS NOT NULL"
            )[0][0]
            == 0
        ),
        "every run to complete",
    )
    check_logs(cluster, runs)
    # A node completed before a kill never starts again. (A node can run twice concurrently when
    # a slow worker's lease expires under it: the fenced copy writes nothing, the log says once.)
    for run, path, completed_at in completed_before_a_kill:
        starts = execution_starts(run, path, cluster.test_dir)
        assert starts and max(starts) <= completed_at, (run, path, starts, completed_at)
    report = {
        "kills": len(recoveries),
        "recovery_seconds": {
            "min": min(recoveries),
            "max": max(recoveries),
            "mean": sum(recoveries) / len(recoveries),
        },
    }
    (cluster.test_dir / "recovery.json").write_text(json.dumps(report))
    print(
        f"\nworker death recovery (lease {cluster.env['WFAPP_LEASE_SECONDS']} s, sweep {cluster.env['WFAPP_SWEEP_SECONDS']} s): {report}"
    )


def test_a_frozen_worker_writes_nothing_after_it_resumes(cluster: Cluster) -> None:
    frozen = cluster.worker(concurrency=4)
    # Long steps: the report below (a process of its own) must come while the run is held.
    (run,) = cluster.drive("start", "chain", "1", '{"pause": 3}')
    cluster.wait_for(lambda: bool(_held_by(cluster, frozen.pid)), "the first worker to take the run")
    cluster.wait_for(
        lambda: executions(run, "chain@1/step1@1", cluster.test_dir) == 1, "the second step to run"
    )
    holders = json.loads(cluster.manage("wf", "workers").stdout)["leases"]
    assert [(h["worker"].split(":")[1], [r["run"] for r in h["runs"]]) for h in holders] == [
        (str(frozen.pid), [run])
    ]
    frozen.send_signal(signal.SIGSTOP)
    stopped_at_seq = cluster.sql("SELECT last_seq FROM wfapp_session WHERE id = %s", run)[0][0]
    done = {path for _, path, _ in _completed_nodes(cluster)}
    in_flight = next(i for i in range(STEPS) if f"chain@1/step{i}@1" not in done)
    other = cluster.worker(concurrency=4)
    cluster.wait_for(
        lambda: bool(_held_by(cluster, other.pid)), "another worker to take the run past the lease"
    )
    frozen.send_signal(signal.SIGCONT)
    cluster.wait_for(
        lambda: cluster.sql("SELECT status FROM wfapp_session WHERE id = %s", run)[0][0] == "completed",
        "the run to complete",
    )
    time.sleep(float(cluster.env["WFAPP_LEASE_SECONDS"]))  # let the resumed worker try whatever it would
    check_logs(cluster, [run])
    later = cluster.sql(
        "SELECT seq, data FROM wfapp_event WHERE session_id = %s AND seq > %s AND kind = 'completed' "
        "AND node_path LIKE '%%/step%%'",
        run,
        stopped_at_seq,
    )
    writers = {data["output"]["by"] for _, data in later}
    assert later and writers == {other.pid}, (writers, frozen.pid)
    counts = [executions(run, f"chain@1/step{i}@1", cluster.test_dir) for i in range(STEPS)]
    # The step it was in (if it had started it) ran twice: once frozen, once by the new holder.
    assert counts[in_flight] in (1, 2) and counts[:in_flight] + counts[in_flight + 1 :] == [1] * (
        STEPS - 1
    ), counts
    # Declared dead meanwhile (the sweep removed it), it exits non-zero for its supervisor to
    # restart it under a new name, rather than carry on as a zombie.
    assert frozen.wait(timeout=30) != 0
    assert "was taken over by another worker" in (cluster.test_dir / "worker-0.log").read_text()
