"""The scaled mode on PostgreSQL, beside DBOS Transact doing the same workload in the same run.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres \\
        .venv/bin/python -m bench.scaled --out scaled.json [--runs 500] [--workers 1,2,4] [--tiny]

- Throughput: ``--runs`` runs of ``chain20`` (20 no-op nodes) started at once, executed by 1, 2
  and 4 ``manage.py wf worker`` processes (``--concurrency`` each, already up); from the first
  start to the last completion: runs/s and nodes/s. The peer: the same with DBOS worker
  processes (``bench.scaled_dbos``, ``worker_concurrency`` the same) on a database of its own on
  the same server; per-node durable cost = 1 / nodes/s, ours over DBOS's.
- Answer-to-completion through the queue: ``manage.py serve`` and one worker; the dashboard
  benchmark's client answers ``bench_ask`` runs (``bench.dashboard_live``), from before the
  answer POST to the completion's frame on the run page's websocket.
- Worker-death recovery: a worker killed with SIGKILL while it holds runs; the time until
  every run it held has advanced again (target: lease + sweep + 5 s).
- The floor: a bare procrastinate no-op job's defer-to-executed latency on the same server.

Each part runs on a fresh copy of a migrated template database; every database is dropped at
the end. The machine's load is recorded; compare ratios within one run only.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg

from bench.common import machine
from bench.merge import portable
from bench.scaled_flows import NODES

ROOT = Path(__file__).resolve().parent.parent
FLOWS = "bench.scaled_flows:chain20,bench.dashboard_flows:bench_ask"
RECOVERY_LEASE, RECOVERY_SWEEP = 6, 1


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


class Postgres:
    """The server from ``DATABASE_URL``: databases of the benchmark's own, dropped at the end."""

    def __init__(self, url: str) -> None:
        self.admin = url
        self.names: list[str] = []

    def url(self, name: str) -> str:
        return self.admin.rsplit("/", 1)[0] + "/" + name

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(sql)  # type: ignore[arg-type]

    def create(self, name: str, template: str | None = None) -> str:
        self._admin(f"CREATE DATABASE {name}" + (f" TEMPLATE {template}" if template else ""))
        self.names.append(name)
        return self.url(name)

    def drop_all(self) -> None:
        for name in reversed(self.names):
            self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    @staticmethod
    def one(url: str, sql: str, *params: Any) -> Any:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(sql, params).fetchone()  # type: ignore[arg-type]
            return None if row is None else row[0]


class Cluster:
    """Our processes on one database: workers, a server, the client actions."""

    def __init__(self, url: str, work: Path, **extra: str) -> None:
        self.url = url
        self.work = work
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded",
            "DATABASE_URL": url,
            "WFAPP_RUNTIME": "workers",
            "WFAPP_EXTRA_WORKFLOWS": FLOWS,
            "WFAPP_DATA_DIR": str(work),
            "WFAPP_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
            # One operator starts the runs and answers them: the bench workflows' approvals are
            # exempt from four-eyes, as a workflow may be.
            "WFAPP_REQUESTER_MAY_APPROVE": "bench_ask,bench_push",
            **extra,
        }
        self.processes: list[subprocess.Popen[bytes]] = []

    def worker(self, concurrency: int) -> subprocess.Popen[bytes]:
        with open(self.work / f"worker-{len(self.processes)}.log", "wb") as out:
            cmd = [sys.executable, "manage.py", "wf", "worker", "--concurrency", str(concurrency)]
            process = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT)
        self.processes.append(process)
        return process

    def client(self, *args: str) -> Any:
        done = subprocess.run(
            [sys.executable, "-m", "bench.scaled_client", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"bench.scaled_client {args[0]} failed:\n{done.stderr[-3000:]}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def workers_up(self, count: int) -> None:
        until(
            lambda: Postgres.one(self.url, "SELECT count(*) FROM procrastinate_workers") >= count,
            f"{count} workers to start",
        )

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=40)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self.processes.clear()


def until(condition: Callable[[], bool], what: str, timeout: float = 600.0, poll: float = 0.02) -> float:
    """Wait for ``condition``; return the time (``time.time()``) it first held."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(poll)
    return time.time()


@contextmanager
def cluster(pg: Postgres, template: str, name: str, **extra: str) -> Iterator[Cluster]:
    url = pg.create(f"{template}_{name}", template)
    with tempfile.TemporaryDirectory(prefix=f"wfscaled-{name}-") as work:
        ours = Cluster(url, Path(work), **extra)
        try:
            yield ours
        finally:
            ours.stop()


def throughput_ours(pg: Postgres, template: str, workers: int, runs: int, concurrency: int) -> dict[str, Any]:
    with cluster(pg, template, f"ours{workers}") as ours:
        for _ in range(workers):
            ours.worker(concurrency)
        ours.workers_up(workers)
        started = ours.client("start", str(runs), "{}")
        done_at = until(
            lambda: (
                Postgres.one(ours.url, "SELECT count(*) FROM wfapp_session WHERE status = 'completed'")
                >= runs
            ),
            f"{runs} runs to complete",
        )
        nodes = Postgres.one(
            ours.url, "SELECT count(*) FROM wfapp_event WHERE kind = 'completed' AND node_path LIKE '%%/%%'"
        )
    return _rates(runs, nodes, started, done_at)


def throughput_dbos(pg: Postgres, peers: Path, workers: int, runs: int, concurrency: int) -> dict[str, Any]:
    name = f"wfbench_dbos_{os.getpid()}_{workers}"
    url = pg.create(name).replace("postgres://", "postgresql://", 1)
    processes = []
    try:
        for _ in range(workers):
            cmd = [str(peers), "-m", "bench.scaled_dbos", "worker", url, str(concurrency)]
            process = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            processes.append(process)
            assert process.stdout is not None
            if process.stdout.readline().strip() != b"ready":  # one at a time: launch migrates
                raise RuntimeError("a DBOS worker did not start")
        cmd = [str(peers), "-m", "bench.scaled_dbos", "enqueue", url, str(runs), str(NODES)]
        enqueue = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=True)
        started = json.loads(enqueue.stdout.strip().splitlines()[-1])
        done = "SELECT count(*) FROM dbos.workflow_status WHERE status = 'SUCCESS'"
        done_at = until(lambda: Postgres.one(url, done) >= runs, f"{runs} DBOS runs to complete")
        steps = Postgres.one(url, "SELECT count(*) FROM dbos.operation_outputs")
    finally:
        for process in processes:
            process.send_signal(signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
    return _rates(runs, steps, started, done_at)


def _rates(runs: int, nodes: int, started: dict[str, Any], done_at: float) -> dict[str, Any]:
    seconds = done_at - float(started["started"])
    return {
        "runs": runs,
        "nodes": nodes,
        "seconds": round(seconds, 3),
        "enqueue_seconds": round(float(started["enqueued"]) - float(started["started"]), 3),
        "runs_per_s": round(runs / seconds, 2),
        "nodes_per_s": round(nodes / seconds, 1),
    }


def answers(pg: Postgres, template: str, samples: int) -> dict[str, Any]:
    with cluster(pg, template, "answers") as ours:
        ours.worker(10)
        ours.workers_up(1)
        result: dict[str, Any] = ours.client("answers", str(samples))
        return result


_HELD = "SELECT id, last_seq FROM wfapp_session WHERE lease_owner LIKE %s AND status = 'running'"
_SEQS = "SELECT id, last_seq FROM wfapp_session WHERE id = ANY(%s)"
_OPEN = "SELECT count(*) FROM wfapp_session WHERE status != 'completed'"


def recovery(pg: Postgres, template: str, kills: int) -> dict[str, Any]:
    lease = {"WFAPP_LEASE_SECONDS": str(RECOVERY_LEASE), "WFAPP_SWEEP_SECONDS": str(RECOVERY_SWEEP)}
    seconds = []
    with cluster(pg, template, "recovery", **lease) as ours:
        survivor = ours.worker(20)
        for _ in range(kills):
            victim = ours.worker(20)
            # 6 s a run, more runs than the survivor takes: the victim dies holding some.
            ours.client("start", "40", '{"pause": 0.3}')
            pattern = f"%:{victim.pid}:%"
            until(lambda pattern=pattern: bool(_rows(ours.url, _HELD, pattern)), "the victim to hold runs")
            victim.send_signal(signal.SIGKILL)
            victim.wait()
            killed_at = time.time()
            taken = dict(_rows(ours.url, _HELD, pattern))

            def advanced(taken: dict[str, int] = taken) -> bool:
                seen = dict(_rows(ours.url, _SEQS, list(taken)))
                return all(seen[run] > seq for run, seq in taken.items())

            back = until(advanced, "the killed worker's runs to advance", poll=0.05)
            seconds.append(round(back - killed_at, 3))
            until(lambda: Postgres.one(ours.url, _OPEN) == 0, "every run to complete")
        if survivor.poll() is not None:
            raise RuntimeError("the surviving worker exited")
    return {
        "lease_s": RECOVERY_LEASE,
        "sweep_s": RECOVERY_SWEEP,
        "target_s": RECOVERY_LEASE + RECOVERY_SWEEP + 5,
        "samples_s": seconds,
        "max_s": max(seconds),
        "mean_s": round(sum(seconds) / len(seconds), 3),
    }


def _rows(url: str, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return list(conn.execute(sql, params).fetchall())  # type: ignore[arg-type]


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    from bench.run import ensure_peers_venv

    peers = None if args.tiny else ensure_peers_venv()  # tiny: ours only, to keep this file working
    pg = Postgres(os.environ["DATABASE_URL"])
    template = f"wfbench_scaled_{os.getpid()}"
    doc: dict[str, Any] = {
        "command": portable(" ".join(["python -m bench.scaled", *sys.argv[1:]])),
        "generated_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": machine(),
        "redis": bool(os.environ.get("REDIS_URL")),
        "sizes": {
            "runs": args.runs,
            "nodes": NODES,
            "concurrency": args.concurrency,
            "workers": args.workers,
        },
    }
    try:
        url = pg.create(template)
        with tempfile.TemporaryDirectory(prefix="wfscaled-migrate-") as work:
            env = Cluster(url, Path(work)).env
            subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
        doc["throughput"] = {}
        for workers in args.workers:
            log(f"throughput with {workers} worker processes: ours, then DBOS")
            doc["throughput"][str(workers)] = {
                "ours": throughput_ours(pg, template, workers, args.runs, args.concurrency),
                "dbos": None
                if peers is None
                else throughput_dbos(pg, peers, workers, args.runs, args.concurrency),
            }
        log("the floor: a bare procrastinate no-op job")
        with cluster(pg, template, "floor") as ours:
            doc["floor"] = ours.client("floor", str(args.floor_samples))
        log("answer-to-completion through the queue")
        doc["answer"] = answers(pg, template, args.answers)
        log("worker-death recovery")
        doc["recovery"] = recovery(pg, template, args.kills)
        doc["load_after"] = os.getloadavg()[0]
    finally:
        pg.drop_all()
    return doc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--runs", type=int, default=500)
    p.add_argument("--workers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4])
    p.add_argument("--concurrency", type=int, default=50, help="runs at once per worker process")
    p.add_argument("--answers", type=int, default=30)
    p.add_argument("--kills", type=int, default=3)
    p.add_argument("--floor-samples", type=int, default=200)
    p.add_argument(
        "--tiny", action="store_true", help="a few runs, ours only (no DBOS): checks the benchmark works"
    )
    args = p.parse_args()
    if args.tiny:
        args.runs, args.workers, args.concurrency = 5, [1], 5
        args.answers, args.kills, args.floor_samples = 3, 1, 5
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        raise SystemExit("bench.scaled needs DATABASE_URL=postgres://USER@HOST:5432/DBNAME (an admin URL)")
    args.out.write_text(json.dumps(run_all(args), indent=1) + "\n")
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
