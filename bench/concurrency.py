"""Many runs at once on PostgreSQL: nodes/s for 1, 10 and 100 concurrent W1 runs.

    DATABASE_URL=postgres://... .venv/bin/python -m bench.concurrency --out c.json [--tiny]

``bench/run.py`` runs it when ``DATABASE_URL`` is PostgreSQL (``--tiny``: 1 and 10 runs of 20
nodes only).

Our engine on the Django store as the runtime's workers use it (``own_thread=True``), in a
database of its own (created and dropped, as ``workloads/ours.py`` does), in one process and
one event loop: ``c`` runs of the W1 chain started together. Each count is measured three
ways, alternately in the same process, so the ratios come from one run: with the store's
group commit across runs (the default on PostgreSQL); without it, each node's append its own
transaction in the ``WFAPP_STORE_THREADS`` store threads (``per_commit``: the verdict's
baseline); and without it in one store thread (``one_thread``: how it was when group commit
was asked for). Every run's result is checked before its time counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

FULL = {"n": 200, "repeats": 1, "counts": (1, 10, 100)}
TINY = {"n": 20, "repeats": 1, "counts": (1, 10)}  # bench-tiny: that it works, quickly


MODES = ("per_commit", "one_thread", "grouped")


async def measure(runs: int, n: int, mode: str) -> float:
    """Nodes per second for ``runs`` concurrent W1 runs of ``n`` nodes, in one of ``MODES``."""
    from bench.workloads.ours import build
    from engine import Runner
    from wfapp.store import events as stores

    workflow = build("W1", n, 0)
    store = stores.DjangoEventStore(own_thread=True, group_commit=mode == "grouped")
    threads = stores._threads()
    every = threads[:]
    if mode == "one_thread":
        del threads[1:]  # every run's operations in the first store thread
    runners = [Runner(workflow, store=store) for _ in range(runs)]
    try:
        start = time.perf_counter()
        results = await asyncio.gather(*(runner.run(0) for runner in runners))
        wall = time.perf_counter() - start
    finally:
        threads[:] = every
    bad = [r for r in results if (r.status, r.output) != ("completed", n)]
    if bad:
        raise RuntimeError(f"{len(bad)} of {runs} runs did not complete with {n}: {bad[0]}")
    return runs * n / wall


async def main_async(size: dict[str, Any]) -> dict[str, Any]:
    from bench.workloads.ours import close

    rows = []
    try:
        for runs in size["counts"]:
            samples: dict[str, list[float]] = {mode: [] for mode in MODES}
            await measure(runs, size["n"], "grouped")  # warm-up
            for _ in range(size["repeats"]):
                for mode in MODES:
                    samples[mode].append(await measure(runs, size["n"], mode))
            row = {"runs": runs, "nodes": size["n"]} | {m: statistics.median(samples[m]) for m in MODES}
            rows.append(row)
            print(
                f"[concurrency] {runs:3} runs: {row['one_thread']:,.0f} (one thread), "
                f"{row['per_commit']:,.0f} -> {row['grouped']:,.0f} nodes/s",
                file=sys.stderr,
            )
    finally:
        await close()
    return {"rows": rows, "load": os.getloadavg()[0]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tiny", action="store_true")
    args = p.parse_args()
    if not os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        raise SystemExit("bench.concurrency needs DATABASE_URL pointing at PostgreSQL")
    from bench.workloads.ours import setup_django

    setup_django("django-postgres")  # synchronous: before the event loop
    result = asyncio.run(main_async(TINY if args.tiny else FULL))
    result["command"] = " ".join(["bench/concurrency.py", *sys.argv[1:]])
    args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
