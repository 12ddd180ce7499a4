"""Measure W1-W6s on our engine, google-adk and LangGraph side by side, plus the floor.

    .venv/bin/python bench/run.py              # everything: writes bench/results.json, bench/RESULTS.md
    .venv/bin/python bench/run.py --tiny       # small sizes, our engine and the floor (CI)
    .venv/bin/python bench/run.py --only adk --workloads W1,W3
    .venv/bin/python bench/run.py --only floor,ours --stores memory --merge-into bench/results.json

With ``DATABASE_URL`` on PostgreSQL it also runs ``bench/concurrency.py`` (1, 10 and 100
concurrent W1 runs, with and without group commit) on the same snapshot.

Run it with the project's interpreter: our engine and the floor run there; the peers run in
``bench/.peers-venv``, created on the same Python and filled from PyPI on first use (their code
is never copied into the project). Each (engine, workload, store) runs in a subprocess of its
own: one warm-up, then ``--runs`` timed runs whose results are checked before they count.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench import api, merge, report, summary  # noqa: E402
from bench.common import FULL_SIZES, TINY_SIZES, WORKLOADS, machine  # noqa: E402

BENCH = ROOT / "bench"
PEERS_VENV = BENCH / ".peers-venv"
PEERS_REQUIREMENTS = BENCH / "peers-requirements.txt"
PEERS = ("adk", "langgraph")
ENGINES = ("floor", "ours", *PEERS)
PACKAGES = ("engine", "wfapp")  # what a snapshot holds besides bench/

# Which stores each engine is measured on, and for which workloads. The peers' SQLite stores
# are measured where BENCHMARKS.md compares them (W1 and W3 against the Django store, W6 on
# ADK's store, W6s against LangGraph's); --sqlite-all measures every workload there.
# Our Django store runs W1 and W3 (BENCHMARKS.md's comparison) on SQLite, and on PostgreSQL
# when DATABASE_URL is set.
DJANGO_WORKLOADS = ("W1", "W3", "W6", "W6s")
DJANGO_STORES: dict[str, tuple[str, ...]] = {"django-sqlite": DJANGO_WORKLOADS}
if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
    DJANGO_STORES["django-postgres"] = DJANGO_WORKLOADS
STORES: dict[str, dict[str, tuple[str, ...]]] = {
    "floor": {"memory": WORKLOADS},
    "ours": {"memory": WORKLOADS, **DJANGO_STORES},
    "adk": {"memory": WORKLOADS, "sqlite": ("W1", "W3", "W6")},
    "langgraph": {"memory": WORKLOADS, "sqlite": ("W1", "W3", "W6", "W6s")},
}


# Configurations too slow for a warm-up and 5 runs: google-adk's W6s takes over two minutes a
# run (its resumes grow with the history). They run this often instead; RESULTS.md says so.
SLOW: dict[tuple[str, str, str], tuple[int, int]] = {
    ("adk", "W6s", "memory"): (0, 1),  # (warm-ups, runs)
    ("adk", "W6s", "sqlite"): (0, 1),
}


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def peers_python() -> Path:
    return PEERS_VENV / "bin" / "python"


def ensure_peers_venv() -> Path:
    """Create the peers' virtualenv on this interpreter and install the pinned peers into it."""
    py = peers_python()
    wanted = hashlib.sha256(PEERS_REQUIREMENTS.read_bytes() + sys.version.encode()).hexdigest()
    stamp = PEERS_VENV / ".installed"
    if py.exists() and stamp.exists() and stamp.read_text() == wanted:
        return py
    if not py.exists():
        log(f"creating {PEERS_VENV.relative_to(ROOT)} with {sys.executable}")
        subprocess.run([sys.executable, "-m", "venv", str(PEERS_VENV)], check=True)
    log("installing the peers from PyPI (google-adk, LangGraph, SQLite drivers) ...")
    for cmd in (
        [str(py), "-m", "pip", "install", "--quiet", "--upgrade", "pip"],
        [str(py), "-m", "pip", "install", "--quiet", "-r", str(PEERS_REQUIREMENTS)],
    ):
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            log(done.stdout[-4000:] + done.stderr[-4000:])
            raise SystemExit(f"installing the peers failed: {' '.join(cmd)}")
    stamp.write_text(wanted)
    return py


def plan(args: argparse.Namespace) -> list[tuple[str, str, str]]:
    engines = args.only or (("floor", "ours") if args.tiny else ENGINES)
    workloads = args.workloads or WORKLOADS
    configs = []
    for workload in WORKLOADS:
        if workload not in workloads:
            continue
        for engine in ENGINES:
            if engine not in engines:
                continue
            for store, covered in STORES[engine].items():
                if args.stores and store not in args.stores:
                    continue
                if workload in covered or (args.sqlite_all and store in ("sqlite", *DJANGO_STORES)):
                    configs.append((engine, workload, store))
    return configs


def snapshot(source: str) -> Path:
    """Copy bench/, engine/ and wfapp/ (the Django store) to a temporary tree the workers import from.

    The engine changes while a long run goes on (others commit); every configuration must
    measure the same code. ``source="head"`` takes engine/ as committed at HEAD, ``"worktree"``
    as it is on disk now.
    """
    tree = Path(tempfile.mkdtemp(prefix="wfbench-src-"))
    junk = shutil.ignore_patterns(".peers-venv", "__pycache__", "results*.json", "RESULTS*.md")
    shutil.copytree(BENCH, tree / "bench", ignore=junk)
    if source == "head":
        archive = subprocess.run(
            ["git", "archive", "HEAD", *PACKAGES], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    else:
        for package in PACKAGES:
            shutil.copytree(ROOT / package, tree / package, ignore=junk)
    return tree


def run_config(
    python: Path,
    engine: str,
    workload: str,
    store: str,
    size: dict[str, int],
    args: argparse.Namespace,
    tree: Path,
) -> dict[str, Any]:
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    warmup, runs = args.warmup, args.runs
    if (engine, workload, store) in SLOW and not args.tiny:
        warmup, runs = (min(a, b) for a, b in zip(SLOW[engine, workload, store], (warmup, runs), strict=True))
    cmd = [
        str(python),
        "-m",
        "bench.worker",
        engine,
        workload,
        store,
        json.dumps(size),
        out,
        "--runs",
        str(runs),
        "--warmup",
        str(warmup),
    ]
    load_before = os.getloadavg()[0]
    env = {**os.environ, "PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    try:
        done = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True, timeout=args.timeout)
        try:
            with open(out) as fh:
                result: dict[str, Any] = json.load(fh)
        except (OSError, ValueError):
            result = {
                "engine": engine,
                "workload": workload,
                "store": store,
                "size": size,
                "error": f"worker exited {done.returncode} without results",
                "traceback": done.stderr[-4000:],
            }
    except subprocess.TimeoutExpired:
        result = {
            "engine": engine,
            "workload": workload,
            "store": store,
            "size": size,
            "error": f"timed out after {args.timeout} s",
        }
    finally:
        Path(out).unlink(missing_ok=True)
    result["runs"], result["warmup"] = runs, warmup
    result["load_before"], result["load_after"] = round(load_before, 2), round(os.getloadavg()[0], 2)
    return result


def merge_rounds(rounds: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """One result per configuration: the samples of every round, the worst RSS and load.

    Rounds spread each configuration's samples over the whole run, so a burst of other work
    on the machine weighs on every engine alike instead of on whichever ran during it.
    """
    merged: dict[tuple[str, str, str], dict[str, Any]] = {}
    for raws in rounds:
        for raw in raws:
            key = (raw["engine"], raw["workload"], raw["store"])
            if key not in merged:
                merged[key] = {**raw, "samples": list(raw.get("samples") or []), "rounds": 1}
                continue
            row = merged[key]
            row["rounds"] += 1
            if raw.get("error") and not row.get("error"):
                row["error"], row["traceback"] = raw["error"], raw.get("traceback")
            row["samples"] += raw.get("samples") or []
            row["runs"] = row.get("runs", 0) + raw.get("runs", 0)
            for k, pick in (
                ("rss_peak_kb", max),
                ("rss_baseline_kb", min),
                ("load_before", min),
                ("load_after", max),
            ):
                if raw.get(k) is not None and row.get(k) is not None:
                    row[k] = pick(row[k], raw[k])
    return list(merged.values())


def run_dashboard(args: argparse.Namespace) -> dict[str, Any] | None:
    """The dashboard figures (bench/dashboard.py), in a subprocess of its own.

    With ``--engine head`` it measures the code as committed (from a ``git archive`` of its
    own: it needs templates/ and manage.py, which the snapshot does not hold), else the working
    tree; it starts one more subprocess per database, each on a fresh data directory.
    """
    t0 = time.perf_counter()
    cmd = ["-m", "bench.dashboard", "--source", args.engine, *(["--tiny"] if args.tiny else [])]
    result = run_module("dashboard", cmd, ROOT, {"PYTHONPATH": str(ROOT)}, args.timeout)
    if result is None:
        return None
    for db, row in result["databases"].items():
        shown = f"FAILED: {row['error']}" if row.get("error") else "done"
        log(f"[dashboard] {db:8} {shown}  ({row.get('duration_s', 0):.0f} s)")
    log(f"dashboard figures measured in {time.perf_counter() - t0:.0f} s")
    return result


def run_module(
    name: str, cmd: list[str], cwd: Path, env: dict[str, str], timeout: int
) -> dict[str, Any] | None:
    """``python <cmd> --out FILE`` in a subprocess; the JSON it wrote, or None (said why)."""
    with tempfile.TemporaryDirectory(prefix=f"wf{name}-out-") as tmp:
        out = Path(tmp) / f"{name}.json"
        try:
            done = subprocess.run(
                [sys.executable, *cmd, "--out", str(out)],
                cwd=cwd,
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                timeout=timeout,
            )
        except subprocess.TimeoutExpired:
            log(f"{name}: timed out after {timeout} s")
            return None
        if not out.exists():
            log(f"{name}: exited {done.returncode} without results\n{done.stderr[-4000:]}")
            return None
        result: dict[str, Any] = json.loads(out.read_text())
        return result


def postgres_url() -> bool:
    return os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))


def run_concurrency(args: argparse.Namespace, tree: Path) -> dict[str, Any] | None:
    """``bench.concurrency`` (1, 10 and 100 concurrent W1 runs on PostgreSQL) in a subprocess.

    It imports from the snapshot, so it measures the same code as the configurations.
    """
    t0 = time.perf_counter()
    cmd = ["-m", "bench.concurrency", *(["--tiny"] if args.tiny else [])]
    env = {"PYTHONPATH": str(tree), "PYTHONHASHSEED": "0"}
    result = run_module("concurrency", cmd, tree, env, args.timeout)
    if result is None:
        return None
    result["command"] = "bench/run.py (bench/concurrency.py" + (" --tiny)" if args.tiny else ")")
    for row in result["rows"]:
        log(f"[concurrency] {row['runs']:3} runs: {row['per_commit']:,.0f} -> {row['grouped']:,.0f} nodes/s")
    log(f"concurrency measured in {time.perf_counter() - t0:.0f} s")
    return result


def run_agents(args: argparse.Namespace) -> dict[str, Any] | None:
    """The agent figures (bench/agents.py): bare pydantic-ai and ours per store, google-adk in its venv."""
    with tempfile.TemporaryDirectory(prefix="wfagents-out-") as tmp:
        out = Path(tmp) / "agents.json"
        cmd = [sys.executable, "-m", "bench.agents", "--out", str(out)]
        cmd += ["--tiny"] if args.tiny else ["--peers-python", str(ensure_peers_venv())]
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        try:
            subprocess.run(cmd, cwd=ROOT, env=env, timeout=args.timeout, check=False)
        except subprocess.TimeoutExpired:
            log(f"agents: timed out after {args.timeout} s")
            return None
        return json.loads(out.read_text()) if out.exists() else None


def git_state(source: str) -> dict[str, Any]:
    """The commit measured, and the uncommitted changes in engine/ and bench/ if any."""

    def git(*cmd: str) -> str:
        done = subprocess.run(["git", *cmd], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.rstrip("\n") if done.returncode == 0 else ""

    return {
        "commit": git("rev-parse", "--short", "HEAD"),
        "engine_commit": git("log", "-1", "--format=%h %s", "--", "engine"),
        "engine_source": source,
        "uncommitted": [
            line[3:]
            for line in git("status", "--porcelain", "--", "engine", "bench").splitlines()
            if not line[3:].startswith(("bench/results", "bench/RESULTS"))
        ],
    }


def write_results(out: Path, doc: dict[str, Any]) -> None:
    """``out`` and the RESULTS.md beside it."""
    out.write_text(json.dumps(doc, indent=1, default=repr) + "\n")
    md = out.with_name(out.name.replace("results", "RESULTS").replace(".json", ".md"))
    md.write_text(report.render(doc))
    log(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out} and {md.name}")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tiny", action="store_true", help="small sizes; our engine and the floor only (CI)")
    p.add_argument(
        "--only", type=lambda s: tuple(s.split(",")), help=f"engines, comma-separated: {','.join(ENGINES)}"
    )
    p.add_argument("--workloads", type=lambda s: tuple(s.split(",")), help="e.g. W1,W3,W6s")
    p.add_argument("--stores", type=lambda s: tuple(s.split(",")), help="e.g. memory or sqlite")
    p.add_argument(
        "--sqlite-all", action="store_true", help="measure every workload on the peers' SQLite stores"
    )
    p.add_argument("--runs", type=int, default=5)
    p.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="run the whole plan this many times and pool the samples (noisy machines)",
    )
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--timeout", type=int, default=1800, help="seconds per configuration")
    p.add_argument(
        "--out",
        type=Path,
        help="results file (default bench/results.json, bench/results-tiny.json with --tiny; "
        "with --merge-into, a temporary file for the partial run)",
    )
    p.add_argument(
        "--engine",
        choices=("worktree", "head"),
        default="worktree",
        help="measure engine/ as on disk (default) or as committed at HEAD",
    )
    p.add_argument("--strict", action="store_true", help="exit non-zero when a configuration fails its check")
    p.add_argument(
        "--no-api",
        action="store_true",
        help="skip the JSON API figures (bench/api.py; also skipped when --only leaves out ours)",
    )
    p.add_argument(
        "--no-dashboard",
        action="store_true",
        help="skip the dashboard figures (bench/dashboard.py; also skipped when --only leaves out ours)",
    )
    p.add_argument(
        "--no-concurrency",
        action="store_true",
        help="skip bench/concurrency.py (run when DATABASE_URL is PostgreSQL and ours is measured)",
    )
    p.add_argument(
        "--merge-into",
        type=Path,
        metavar="RESULTS",
        help="a partial run: keep its rows beside those of RESULTS (bench.merge) and re-render its RESULTS.md",
    )
    p.add_argument(
        "--no-agents",
        action="store_true",
        help="skip the agent figures (bench/agents.py; also skipped when --only leaves out ours)",
    )
    args = p.parse_args(argv)
    for engine in args.only or ():
        if engine not in ENGINES:
            p.error(f"unknown engine {engine!r}; choose from {', '.join(ENGINES)}")
    for workload in args.workloads or ():
        if workload not in WORKLOADS:
            p.error(f"unknown workload {workload!r}; choose from {', '.join(WORKLOADS)}")
    if args.merge_into is not None and args.out is None:
        args.out = Path(tempfile.mkdtemp(prefix="bench-later-")) / "later.json"
    elif args.merge_into is not None and args.out.resolve() == args.merge_into.resolve():
        p.error("--out must not be the --merge-into file: the partial run would replace the full one")
    if args.out is None:
        args.out = BENCH / ("results-tiny.json" if args.tiny else "results.json")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configs = plan(args)
    if not configs:
        raise SystemExit("nothing to measure with these filters")
    needs_peers = any(engine in PEERS for engine, _, _ in configs)
    python_for = {"floor": Path(sys.executable), "ours": Path(sys.executable)}
    if needs_peers:
        peers = ensure_peers_venv()
        python_for.update(adk=peers, langgraph=peers)
    sizes = TINY_SIZES if args.tiny else FULL_SIZES
    started = time.time()
    git = git_state(args.engine)
    tree = snapshot(args.engine)
    rounds: list[list[dict[str, Any]]] = []
    concurrency: dict[str, Any] | None = None
    try:
        for r in range(1, args.rounds + 1):
            raws = []
            for i, (engine, workload, store) in enumerate(configs, 1):
                if r > 1 and (engine, workload, store) in SLOW and not args.tiny:
                    continue  # minutes a run: once is enough
                t0 = time.perf_counter()
                raw = run_config(python_for[engine], engine, workload, store, sizes[workload], args, tree)
                raws.append(raw)
                row = summary.summarize(raw)
                shown = f"median {row['median_s'] * 1e3:.1f} ms" if row["ok"] else f"FAILED: {row['error']}"
                where = f"round {r}/{args.rounds} " if args.rounds > 1 else ""
                log(
                    f"[{where}{i}/{len(configs)}] {engine:9} {workload:4} {store:7} {shown}  "
                    f"({time.perf_counter() - t0:.0f} s)"
                )
            rounds.append(raws)
        if postgres_url() and not args.no_concurrency and (not args.only or "ours" in args.only):
            concurrency = run_concurrency(args, tree)
    finally:
        shutil.rmtree(tree, ignore_errors=True)
    results = [summary.summarize(raw) for raw in merge_rounds(rounds)]
    doc = {
        "schema": 1,
        "generated_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "command": " ".join(["bench/run.py", *(argv if argv is not None else sys.argv[1:])]),
        "mode": "tiny" if args.tiny else "full",
        "runs": args.runs * args.rounds,
        "rounds": args.rounds,
        "warmup": args.warmup,
        "duration_s": round(time.time() - started, 1),
        "machine": machine(),
        "git": git,
        "sizes": {w: sizes[w] for w in WORKLOADS},
        "versions": summary.versions(results),
        "configs": results,
        # Filled by later benchmarks: the Django store runs as engine "ours" with stores
        # "django-sqlite"/"django-postgres" in "configs"; the dashboard figures go here.
        "dashboard": None,
        "concurrency": concurrency,
        "agents": None,  # bench/agents.py, when measured
        "api": None,
    }
    dashboard_failed: list[str] = []
    if not args.no_dashboard and (not args.only or "ours" in args.only):
        doc["dashboard"] = run_dashboard(args)
        doc["duration_s"] = round(time.time() - started, 1)
        measured = (doc["dashboard"] or {"databases": {"dashboard": {"error": "no result"}}})["databases"]
        dashboard_failed = [f"dashboard on {db}" for db, row in measured.items() if row.get("error")]
    if not args.no_agents and (not args.only or "ours" in args.only):
        doc["agents"] = run_agents(args)
        doc["duration_s"] = round(time.time() - started, 1)
        measured = (doc["agents"] or {"stores": {"all": {"error": "no result"}}})["stores"]
        adk = (doc["agents"] or {}).get("adk") or {}
        dashboard_failed += [f"agents on {store}" for store, row in measured.items() if row.get("error")]
        dashboard_failed += ["agents on google-adk"] if adk.get("error") else []
    if not args.no_api and (not args.only or "ours" in args.only):
        doc["api"] = api.run_all(args.tiny, args.timeout, log)
        doc["duration_s"] = round(time.time() - started, 1)
        measured = doc["api"]["databases"]
        dashboard_failed += [f"JSON API on {db}" for db, row in measured.items() if row.get("error")]
    doc["targets"] = summary.targets(doc)
    if args.merge_into is not None:
        write_results(args.out, doc)  # the partial run itself, then the merged document
        doc = merge.merged(json.loads(args.merge_into.read_text()), doc)
        doc["targets"] = summary.targets(doc)
        args.out = args.merge_into
    write_results(args.out, doc)
    failed = [r for r in results if not r["ok"]]
    for r in failed:
        log(f"FAILED {r['engine']} {r['workload']} {r['store']}: {r['error']}\n{r.get('traceback', '')}")
    for name in dashboard_failed:
        log(f"FAILED {name} (see results' dashboard, agents and JSON API sections)")
    # A closing line CI reads as a count: each configuration whose results were checked, and
    # the dashboard's and the API's databases.
    passed = (
        len(results)
        - len(failed)
        + len((doc["dashboard"] or {}).get("databases") or {})
        + len((doc.get("api") or {}).get("databases") or {})
        - len(dashboard_failed)
    )
    failures = len(failed) + len(dashboard_failed)
    print(f"bench: {passed} passed, {failures} failed", flush=True)
    return 1 if failures and (args.strict or args.tiny) else 0


if __name__ == "__main__":
    sys.exit(main())
