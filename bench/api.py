"""The JSON API's figures: answer-to-completion, a run's event stream latency, reads per second.

    .venv/bin/python -m bench.api --db sqlite|postgres --out api.json [--tiny]

``make bench`` (``bench/run.py``) runs it on SQLite, and on PostgreSQL with ``DATABASE_URL``, each
in a process of its own (``run_all``), into results.json's ``"api"``; RESULTS.md's "JSON API"
section (``bench/api_report.py``) shows it. ``python -m bench.merge bench/results.json --api
api.json`` puts a separate run's figures there.

Against a real server (``manage.py serve``, the embedded profile) on a fresh database, as a
client system would use it, with an API token:

- Answer-to-completion: a ``bench_ask`` run waits for one yes/no answer; the client follows
  its ``runs/{id}/stream``; the clock starts before ``POST interrupts/{id}/answer`` and stops
  when the stream's ``event: end`` (the run completed) arrives.
- Stream latency: a ``bench_push`` run commits its events one at a time; for each, the
  arrival of its SSE frame minus the event's ``timestamp`` (taken just before its commit).
- ``GET runs/{id}``: requests per second over ``read_seconds`` from ``readers`` threads, each
  with its own keep-alive connection.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FULL = {"answers": 30, "warmup": 2, "push_events": 200, "push_pause_ms": 20, "readers": 4, "read_seconds": 10}
TINY = {"answers": 5, "warmup": 1, "push_events": 20, "push_pause_ms": 20, "readers": 2, "read_seconds": 2}


class Client:
    """JSON requests with the bearer token on one keep-alive connection."""

    def __init__(self, port: int, token: str) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = None if body is None else json.dumps(body)
        self.conn.request(method, "/api/v1/" + path, body=data, headers=self.headers)
        response = self.conn.getresponse()
        raw = response.read()
        return response.status, json.loads(raw) if raw else None


class Stream:
    """A run's SSE stream read in a thread: each frame's arrival time, by seq; the end's time."""

    def __init__(self, port: int, token: str, run: str) -> None:
        self.arrivals: dict[int, float] = {}
        self.ended = threading.Event()
        self.ended_at = 0.0
        self.ready = threading.Event()
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        self.conn.request("GET", f"/api/v1/runs/{run}/stream", headers={"Authorization": f"Bearer {token}"})
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        response = self.conn.getresponse()
        self.ready.set()
        seq = None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("id: "):
                seq = int(line[4:])
            elif line.startswith("event: end"):
                self.ended_at = time.time()
                self.ended.set()
                return
            elif line.startswith("data: ") and seq is not None:
                self.arrivals.setdefault(seq, time.time())
                seq = None

    def close(self) -> None:
        self.conn.close()


def _wait_status(client: Client, run: str, status: str, timeout: float = 60) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        _, doc = client.call("GET", f"runs/{run}")
        if doc["status"] == status:
            return dict(doc)
        time.sleep(0.02)
    raise RuntimeError(f"run {run} did not reach {status}")


def answer_to_completion(port: int, token: str, samples: int, warmup: int) -> dict[str, Any]:
    from bench.dashboard_stats import percentiles

    client = Client(port, token)
    totals, posts = [], []
    for i in range(warmup + samples):
        status, run = client.call("POST", "workflows/bench_ask/runs", {"input": {}})
        if status != 201:
            raise RuntimeError(f"start failed: {status} {run}")
        question = _wait_status(client, run["id"], "waiting")["pending"][0]["id"]
        stream = Stream(port, token, run["id"])
        stream.ready.wait(10)
        time.sleep(0.2)  # a person takes longer than this to answer
        t0 = time.time()
        status, _ = client.call("POST", f"interrupts/{question}/answer", {"answer": {"approved": True}})
        t_post = time.time()
        if status not in (200, 202) or not stream.ended.wait(60):
            raise RuntimeError(f"run {run['id']}: answer {status}, or its stream never ended")
        stream.close()
        if i >= warmup:
            totals.append(stream.ended_at - t0)
            posts.append(t_post - t0)
    return {"to_completion": percentiles(totals), "answer_post": percentiles(posts), "samples": samples}


def stream_latency(port: int, token: str, events: int, pause_ms: int) -> dict[str, Any]:
    from bench.dashboard_stats import percentiles
    from wfapp.models import Event

    client = Client(port, token)
    _, run = client.call(
        "POST", "workflows/bench_push/runs", {"input": {"events": events, "pause_ms": pause_ms}}
    )
    question = _wait_status(client, run["id"], "waiting")["pending"][0]["id"]
    stream = Stream(port, token, run["id"])
    stream.ready.wait(10)
    client.call("POST", f"interrupts/{question}/answer", {"answer": {"approved": True}})
    if not stream.ended.wait(60 + events * pause_ms / 1000 * 3):
        raise RuntimeError("the push run's stream never ended")
    stream.close()
    rows = Event.objects.filter(session_id=run["id"], kind="state").values("seq", "timestamp", "data")
    pushed = [r for r in rows if "pushed" in (r["data"].get("state") or {})]
    missing = [r["seq"] for r in pushed if r["seq"] not in stream.arrivals]
    if len(pushed) != events or missing:
        raise RuntimeError(f"{len(pushed)} of {events} events committed; never streamed: {missing[:5]}")
    latencies = [stream.arrivals[r["seq"]] - r["timestamp"] for r in pushed]
    return {"events": events, "pause_ms": pause_ms, "from_timestamp": percentiles(latencies)}


def reads_per_second(port: int, token: str, readers: int, seconds: float) -> dict[str, Any]:
    client = Client(port, token)
    _, run = client.call("POST", "workflows/bench_ask/runs", {"input": {}})
    _wait_status(client, run["id"], "waiting")
    counts = [0] * readers
    stop = time.monotonic() + seconds

    def read(slot: int) -> None:
        mine = Client(port, token)
        while time.monotonic() < stop:
            status, _ = mine.call("GET", f"runs/{run['id']}")
            if status != 200:
                raise RuntimeError(f"GET runs/{{id}} answered {status}")
            counts[slot] += 1

    threads = [threading.Thread(target=read, args=(i,)) for i in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {
        "readers": readers,
        "seconds": seconds,
        "requests": sum(counts),
        "per_second": sum(counts) / seconds,
    }


def measure(database: str, size: dict[str, int]) -> dict[str, Any]:
    from bench.dashboard_client import Server, environ_for_server
    from bench.workloads.ours import setup_django

    data_dir = Path(os.environ.get("WFAPP_DATA_DIR") or tempfile.mkdtemp(prefix="wfapi-"))
    setup_django(f"django-{database}", str(data_dir))
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.db import connection

    from wfapp.api import tokens

    user = User.objects.create_superuser("bench-api", password="unused-" + os.urandom(8).hex())
    _, token = tokens.issue(user, "benchmark")
    url = None
    if connection.vendor == "postgresql":
        import urllib.parse

        parts = urllib.parse.urlsplit(os.environ["DATABASE_URL"])
        url = urllib.parse.urlunsplit(parts._replace(path="/" + str(settings.DATABASES["default"]["NAME"])))
    connection.close()
    started, load_before = time.perf_counter(), os.getloadavg()[0]
    with Server(data_dir, environ_for_server(data_dir, url), data_dir / "commits.log") as server:
        answered = answer_to_completion(server.port, token, size["answers"], size["warmup"])
        pushed = stream_latency(server.port, token, size["push_events"], size["push_pause_ms"])
        reads = reads_per_second(server.port, token, size["readers"], size["read_seconds"])
    from django.db import connections

    for opened in connections.all():  # the pool's too: the database is dropped at exit
        opened.close()
        getattr(opened, "close_pool", lambda: None)()
    return {
        "database": database,
        "sizes": size,
        "answer": answered,
        "stream": pushed,
        "get_run": reads,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "duration_s": time.perf_counter() - started,
    }


def run_all(tiny: bool, timeout: float, log: Any = print) -> dict[str, Any]:
    """Every database this machine has (SQLite; PostgreSQL with ``DATABASE_URL``), each measured
    in a subprocess on a fresh data directory: ``{"sizes": ..., "databases": {db: result}}``."""
    databases = ["sqlite"] + (["postgres"] if os.environ.get("DATABASE_URL") else [])
    measured: dict[str, Any] = {}
    for db in databases:
        started = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="wfapi-") as tmp:
            out = Path(tmp) / "api.json"
            cmd = [sys.executable, "-m", "bench.api", "--db", db, "--out", str(out)] + (
                ["--tiny"] if tiny else []
            )
            env = {**os.environ, "PYTHONPATH": str(ROOT), "WFAPP_DATA_DIR": str(Path(tmp) / "data")}
            try:
                done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                measured[db] = {"error": f"timed out after {timeout:.0f} s"}
                continue
            if out.exists():
                measured[db] = json.loads(out.read_text())
            else:
                measured[db] = {"error": f"exited {done.returncode}: {done.stderr[-2000:]}"}
        shown = f"FAILED: {measured[db]['error']}" if measured[db].get("error") else "done"
        log(f"[api] {db:8} {shown}  ({time.perf_counter() - started:.0f} s)")
    return {"sizes": TINY if tiny else FULL, "databases": measured}


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--db", choices=("sqlite", "postgres"), default="sqlite")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tiny", action="store_true")
    args = p.parse_args()
    result = measure(args.db, TINY if args.tiny else FULL)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
