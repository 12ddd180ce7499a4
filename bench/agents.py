"""Agent nodes: per model step cost of our ``LlmAgent`` over bare pydantic-ai, and google-adk's.

    .venv/bin/python -m bench.agents --out agents.json [--tiny] [--peers-python P]  # everything
    .venv/bin/python -m bench.agents --store memory|django-sqlite|django-postgres   # one store, JSON out
    .venv/bin/python -m bench.merge bench/results.json --agents agents.json         # then bench.report

One store per subprocess (Django is set up once per process). In each, bare pydantic-ai
(``Agent.run``) and our node in a one-node workflow run the same ``FunctionModel`` script
(``workloads/agents.py``) alternately, a pair of runs at a time, so load on the machine
weighs on both alike; the per-step overhead is the median over pairs of (ours - bare), the
ratio the median of ours / bare. google-adk 2.13's ``LlmAgent`` in a ``Workflow`` with a stub
``BaseLlm`` (``workloads/agents_adk.py``) runs in the peers' virtualenv: with a model that
answers at once, its time per step is all overhead. ``bench/run.py`` runs this after the
engine configurations and puts the result under ``"agents"``.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SIZES = {"full": {"steps": 10, "runs": 200, "django_runs": 60, "adk_runs": 60}}
SIZES["tiny"] = {"steps": 4, "runs": 20, "django_runs": 10, "adk_runs": 10}


async def pairs(steps: int, runs: int, store: str) -> dict[str, Any]:
    """Bare pydantic-ai and our node, alternately, on ``store``; per-step figures."""
    from bench.common import Clock
    from bench.workloads import agents
    from bench.workloads import ours as engine_workloads

    shared = None if store == "memory" else await engine_workloads.make_store(store, "", "")
    bare, ours = agents.bare(steps), agents.ours(steps, shared)
    expected = f"{steps - 1} additions"
    samples: list[tuple[float, float]] = []
    cpu: list[tuple[float, float]] = []  # the process's CPU time (its threads' too): load-proof-ish
    for number in range(max(runs // 10, 3) + runs):
        clock, c0 = Clock(), time.process_time()
        got_bare = await bare()
        bare_s, c1 = clock.lap(), time.process_time()
        got_ours = await ours()
        ours_s, c2 = clock.lap(), time.process_time()
        if (got_bare, got_ours) != (expected, expected):
            raise SystemExit(f"{store}: bare gave {got_bare!r}, ours {got_ours!r}; expected {expected!r}")
        if number >= max(runs // 10, 3):
            samples.append((bare_s, ours_s))
            cpu.append((c1 - c0, c2 - c1))
    await engine_workloads.close()
    return {
        "store": store,
        "steps": steps,
        "runs": runs,
        "bare_ms_per_step": statistics.median(b for b, _ in samples) / steps * 1e3,
        "ours_ms_per_step": statistics.median(o for _, o in samples) / steps * 1e3,
        "overhead_ms_per_step": statistics.median(o - b for b, o in samples) / steps * 1e3,
        "ratio": statistics.median(o / b for b, o in samples),
        "bare_cpu_ms_per_step": statistics.median(b for b, _ in cpu) / steps * 1e3,
        "ours_cpu_ms_per_step": statistics.median(o for _, o in cpu) / steps * 1e3,
        "load": round(os.getloadavg()[0], 2),
    }


def _subprocess(cmd: list[str], what: str, timeout: int) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"{what}: timed out after {timeout} s"}
    if done.returncode != 0:
        return {"error": f"{what}: exited {done.returncode}", "traceback": done.stderr[-4000:]}
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def measure_all(mode: str, peers_python: Path | None, timeout: int = 1800) -> dict[str, Any]:
    """Every store (PostgreSQL when ``DATABASE_URL`` names one) and google-adk, one subprocess each."""
    size = SIZES[mode]
    stores = ["memory", "django-sqlite"]
    if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        stores.append("django-postgres")
    started = time.time()
    rows = {}
    for store in stores:
        runs = size["runs"] if store == "memory" else size["django_runs"]
        cmd = [sys.executable, "-m", "bench.agents", "--store", store, "--steps", str(size["steps"])]
        rows[store] = _subprocess([*cmd, "--runs", str(runs)], f"agents on {store}", timeout)
        print(f"[agents] {store:15} {_shown(rows[store])}", file=sys.stderr, flush=True)
    adk: dict[str, Any] | None = None
    if peers_python is not None:
        cmd = [str(peers_python), "-m", "bench.workloads.agents_adk", "--steps", str(size["steps"])]
        adk = _subprocess([*cmd, "--runs", str(size["adk_runs"])], "agents on google-adk", timeout)
        if "samples" in adk:
            adk["ms_per_step"] = statistics.median(adk["samples"]) / size["steps"] * 1e3
            adk["cpu_ms_per_step"] = statistics.median(adk["cpu_samples"]) / size["steps"] * 1e3
        print(f"[agents] google-adk      {_shown(adk)}", file=sys.stderr, flush=True)
    return {
        "command": " ".join(["bench/agents.py", "--tiny" if mode == "tiny" else ""]).strip(),
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "mode": mode,
        "steps": size["steps"],
        "duration_s": round(time.time() - started, 1),
        "stores": rows,
        "adk": adk,
    }


def _shown(row: dict[str, Any]) -> str:
    if row.get("error"):
        return f"FAILED: {row['error']}"
    if "ms_per_step" in row:
        return f"{row['ms_per_step']:.2f} ms per step"
    return f"ours {row['ours_ms_per_step']:.2f} ms, bare {row['bare_ms_per_step']:.2f} ms per step"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=("memory", "django-sqlite", "django-postgres"))
    parser.add_argument("--steps", type=int, default=SIZES["full"]["steps"])
    parser.add_argument("--runs", type=int, default=SIZES["full"]["runs"])
    parser.add_argument("--out", type=Path, help="measure every store and google-adk; write JSON here")
    parser.add_argument("--tiny", action="store_true", help="with --out: small sizes")
    parser.add_argument("--peers-python", type=Path, help="with --out: the peers' interpreter (google-adk)")
    args = parser.parse_args(argv)
    if args.out is not None:
        doc = measure_all("tiny" if args.tiny else "full", args.peers_python)
        args.out.write_text(json.dumps(doc, indent=1) + "\n")
        return 0
    print(json.dumps(asyncio.run(pairs(args.steps, args.runs, args.store or "memory"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
