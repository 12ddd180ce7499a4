"""W1-W5 in memory in machine instructions: our engine against the plain-asyncio floor, counted by
``valgrind --tool=callgrind`` (independent of the load, unlike CPU time on a shared machine).

    .venv/bin/python -m bench.engine_callgrind [--workloads W1,W2,W3,W4,W5]

Each (engine, workload) runs in a process of its own under callgrind: 2 warm-up runs, then
``FEW`` or ``MANY`` more; the difference between the two processes' totals, divided by the extra
runs, is one run's instructions without the imports and the warm-up. Prints a Markdown table
and, with ``--out``, writes the counts as JSON for ``bench.merge --instructions`` (RESULTS.md's
floor targets then read these ratios rather than CPU times, which swing by up to 1.5x from one
process to the next on a shared machine). Takes about three minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bench import callgrind
from bench.callgrind import ROOT
from bench.common import FULL_SIZES, TITLES

FEW, MANY = 1, 4
ENGINES = ("floor", "ours")

RUNS = """
import asyncio, sys
from bench.common import FULL_SIZES
from bench.workloads import floor, ours
engine = {"floor": floor, "ours": ours}[sys.argv[1]]
workload, count = sys.argv[2], int(sys.argv[3])
async def main():
    for _ in range(2 + count):
        await engine.run(workload, FULL_SIZES[workload], "memory", "", "callgrind")
asyncio.run(main())
"""


def instructions(engine: str, workload: str, count: int) -> int:
    return callgrind.instructions(sys.executable, RUNS, engine, workload, str(count))


def per_run(engine: str, workload: str) -> float:
    return (instructions(engine, workload, MANY) - instructions(engine, workload, FEW)) / (MANY - FEW)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default="W1,W2,W3,W4,W5")
    parser.add_argument("--out", help="write the counts here as JSON")
    args = parser.parse_args()
    workloads = args.workloads.split(",")
    with ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        jobs = {(e, w): pool.submit(per_run, e, w) for w in workloads for e in ENGINES}
        counts = {w: {e: round(jobs[(e, w)].result()) for e in ENGINES} for w in workloads}
    print("| workload | floor | ours | ours / floor |\n|---|---|---|---|")
    for w, c in counts.items():
        n = FULL_SIZES[w]["n"]
        print(f"| {w} {TITLES[w]} ({n}) | {c['floor'] / 1e6:.2f} M | {c['ours'] / 1e6:.2f} M | "
              f"{c['ours'] / c['floor']:.2f}x |")  # fmt: skip
    if args.out:
        commit = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True
        )
        doc = {
            "generated_at": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "commit": commit.stdout.strip() or "?",
            "instructions_per_run": counts,
        }
        Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
