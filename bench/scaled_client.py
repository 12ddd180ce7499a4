"""The Django side of ``bench.scaled``, one action per subprocess (with the benchmark's
environment: its database, ``WFAPP_RUNTIME=workers``):

    python -m bench.scaled_client start RUNS INPUT_JSON   # start chain20 runs as a web process does
    python -m bench.scaled_client answers SAMPLES         # answer-to-completion through manage.py serve
    python -m bench.scaled_client floor SAMPLES           # a bare procrastinate no-op job's latency

Each prints one JSON line.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from typing import Any

FLOOR_QUEUE = "bench_floor"


async def start(runs: int, node_input: Any) -> dict[str, Any]:
    from wfapp.registry import get_workflow
    from wfapp.runs import starting

    get_workflow("chain20")  # loads the registry (the demos import pydantic-ai) before the clock
    started = time.time()
    ids = [await starting.start_run("chain20", node_input) for _ in range(runs)]
    return {"started": started, "enqueued": time.time(), "ids": ids}


async def floor(samples: int) -> dict[str, Any]:
    """Defer a no-op job, one at a time, to a worker in this process; time defer to executed
    (the next is deferred once the worker has recorded the job done)."""
    from procrastinate import App, PsycopgConnector

    from bench.dashboard_stats import percentiles

    app = App(connector=PsycopgConnector(conninfo=os.environ["DATABASE_URL"]))
    done: dict[int, float] = {}
    arrived = asyncio.Event()

    @app.task(name="bench.noop", queue=FLOOR_QUEUE)
    async def noop(i: int) -> None:
        done[i] = time.perf_counter()
        arrived.set()

    latencies = []
    async with app.open_async():
        worker = asyncio.ensure_future(
            app.run_worker_async(queues=[FLOOR_QUEUE], concurrency=1, install_signal_handlers=False)
        )
        await asyncio.sleep(1.0)  # the worker listens
        for i in range(samples + 5):
            arrived.clear()
            t0 = time.perf_counter()
            job = await noop.defer_async(i=i)
            await asyncio.wait_for(arrived.wait(), 30)
            if i >= 5:  # warm-up
                latencies.append(done[i] - t0)
            while await _job_status(app, job) != "succeeded":  # the worker is free again
                await asyncio.sleep(0.005)
        worker.cancel()
        await asyncio.gather(worker, return_exceptions=True)
    return percentiles(latencies)


async def _job_status(app: Any, job: int) -> str:
    row = await app.connector.execute_query_one_async(
        "SELECT status FROM procrastinate_jobs WHERE id = %(id)s", id=job
    )
    return str(row["status"])


def answers(samples: int) -> dict[str, Any]:
    """The dashboard benchmark's answer-to-completion against a ``manage.py serve`` of this
    environment (workers mode: a worker process of the benchmark executes the runs)."""
    import secrets
    import tempfile
    from pathlib import Path

    from bench import dashboard_live
    from bench.dashboard import _operator
    from bench.dashboard_client import Browser, Server

    password = secrets.token_urlsafe(16)
    username = _operator(password)
    with tempfile.TemporaryDirectory(prefix="wfscaled-serve-") as work:
        with Server(Path(work), dict(os.environ), Path(work) / "commits.log") as server:
            browser = Browser(server.base)
            browser.login(username, password)
            return asyncio.run(dashboard_live.answer_to_completion(server, browser, samples, 3))


def main(argv: list[str]) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "wfapp.settings.embedded")
    import django

    django.setup()
    action, *args = argv
    if action == "start":
        result: Any = asyncio.run(start(int(args[0]), json.loads(args[1])))
    elif action == "answers":
        result = answers(int(args[0]))
    elif action == "floor":
        result = asyncio.run(floor(int(args[0])))
    else:
        raise SystemExit(f"unknown action {action!r}")
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
