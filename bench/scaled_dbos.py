"""The peer of ``bench.scaled``: DBOS Transact doing the same workload on the same PostgreSQL.

Runs in ``bench/.peers-venv`` (DBOS from PyPI), never imports Django or our engine:

    python -m bench.scaled_dbos worker URL CONCURRENCY   # a worker process: executes queued runs
    python -m bench.scaled_dbos enqueue URL RUNS NODES   # prints its start time, enqueues RUNS runs

A run is a durable workflow of ``NODES`` steps, each a checkpointed no-op like our nodes, taken
from a queue (``worker_concurrency`` per process, as our ``wf worker --concurrency``) by any
number of worker processes sharing the database. DBOS's queues are polled (no LISTEN/NOTIFY
for them): ``POLL_SECONDS`` per process.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time

from dbos import DBOS, DBOSClient

APP = "wfbench"
VERSION = "bench"
QUEUE = "bench"
POLL_SECONDS = 0.05


@DBOS.step()
async def step(index: int, value: int) -> int:
    return value + index


@DBOS.workflow()
async def chain(nodes: int) -> int:
    value = 0
    for index in range(nodes):
        value = await step(index, value)
    return value


def worker(url: str, concurrency: int) -> None:
    DBOS(
        config={
            "name": APP,
            "system_database_url": url,
            "executor_id": f"bench-{os.getpid()}",
            "application_version": VERSION,
            "log_level": "WARNING",
        }
    )
    DBOS.launch()
    DBOS.register_queue(QUEUE, worker_concurrency=concurrency, polling_interval_sec=POLL_SECONDS)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print("ready", flush=True)
    stop.wait()
    DBOS.destroy()


def enqueue(url: str, runs: int, nodes: int) -> None:
    client = DBOSClient(system_database_url=url, application_name=APP)
    started = time.time()
    for _ in range(runs):
        client.enqueue(
            {"queue_name": QUEUE, "workflow_name": chain.__qualname__, "app_version": VERSION}, nodes
        )
    client.destroy()
    print(json.dumps({"started": started, "enqueued": time.time()}), flush=True)


def main(argv: list[str]) -> None:
    action, url, *rest = argv
    if action == "worker":
        worker(url, int(rest[0]))
    elif action == "enqueue":
        enqueue(url, int(rest[0]), int(rest[1]))
    else:
        raise SystemExit(f"unknown action {action!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
