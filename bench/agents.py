"""Per model step overhead of our agent node over bare pydantic-ai, in memory.

    .venv/bin/python -m bench.agents [--steps 10] [--runs 200] [--store memory|django-sqlite|django-postgres]

Prints the median time of one run for each, per model step, and the ratio (target, in
memory: our node within 1.5x of bare pydantic-ai). Timed after a warm-up, garbage collection
included. The Django stores are set up as ``workloads/ours.py`` does (a fresh database).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from bench.workloads import agents

TARGET_RATIO = 1.5


async def _timed(run: Callable[[], Awaitable[Any]], runs: int) -> float:
    for _ in range(max(runs // 10, 3)):
        await run()
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


async def measure(steps: int, runs: int, store: str = "memory") -> dict[str, Any]:
    from bench.workloads import ours as engine_workloads

    shared = None if store == "memory" else await engine_workloads.make_store(store, "", "")
    bare = await _timed(agents.bare(steps), runs)
    ours = await _timed(agents.ours(steps, shared), runs)
    await engine_workloads.close()
    return {
        "store": store,
        "steps": steps,
        "runs": runs,
        "bare_ms_per_step": round(bare / steps * 1000, 3),
        "ours_ms_per_step": round(ours / steps * 1000, 3),
        "overhead_ms_per_step": round((ours - bare) / steps * 1000, 3),
        "ratio": round(ours / bare, 2),
        "target_ratio": TARGET_RATIO,
        "met": ours / bare <= TARGET_RATIO if store == "memory" else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--store", choices=("memory", "django-sqlite", "django-postgres"), default="memory")
    args = parser.parse_args(argv)
    print(json.dumps(asyncio.run(measure(args.steps, args.runs, args.store)), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
