"""Run one configuration (engine, workload, store) in this process and write its samples.

Started by ``bench/run.py`` in a subprocess of its own, with the virtualenv the engine needs,
so peak RSS belongs to this configuration alone:

    python -m bench.worker ENGINE WORKLOAD STORE SIZE_JSON OUT_JSON [--runs 5] [--warmup 1]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import json
import shutil
import sys
import tempfile
import traceback
from importlib import metadata
from typing import Any

from bench.common import check, peak_rss, reset_peak_rss


def versions(packages: tuple[str, ...]) -> dict[str, str]:
    found = {}
    for name in packages:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = "missing"
    return found


async def measure(
    mod: Any, workload: str, size: dict[str, int], store: str, runs: int, warmup: int
) -> list[dict[str, Any]]:
    workdir = tempfile.mkdtemp(prefix=f"wfbench-{mod.NAME}-")
    samples = []
    try:
        for i in range(warmup + runs):
            gc.collect()
            sample = await mod.run(workload, size, store, workdir, str(i))
            check(workload, size, sample)
            if i >= warmup:
                samples.append(sample.to_json())
    finally:
        if hasattr(mod, "close"):
            await mod.close()
        shutil.rmtree(workdir, ignore_errors=True)
    return samples


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("engine")
    p.add_argument("workload")
    p.add_argument("store")
    p.add_argument("size")
    p.add_argument("out")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1)
    a = p.parse_args()
    size = json.loads(a.size)
    result: dict[str, Any] = {"engine": a.engine, "workload": a.workload, "store": a.store, "size": size}
    try:
        mod = importlib.import_module(f"bench.workloads.{a.engine}")
        result["versions"] = versions(mod.PACKAGES)
        if hasattr(mod, "prepare"):
            mod.prepare(a.store)  # what a store needs once per process, outside the RSS baseline
        baseline = reset_peak_rss()
        result["samples"] = asyncio.run(measure(mod, a.workload, size, a.store, a.runs, a.warmup))
        result["rss_baseline_kb"] = baseline
        result["imported_from"] = getattr(sys.modules.get("engine"), "__file__", None)
        result["rss_peak_kb"] = peak_rss()
    except BaseException as e:  # report every failure to the runner, which records it
        result["error"] = f"{type(e).__name__}: {e}"
        result["traceback"] = traceback.format_exc()
    with open(a.out, "w") as f:
        json.dump(result, f, default=repr)
    return 1 if "error" in result else 0


if __name__ == "__main__":
    sys.exit(main())
