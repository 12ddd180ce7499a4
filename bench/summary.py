"""Turn raw worker samples into medians and derived figures, and check the targets."""

from __future__ import annotations

import statistics
from typing import Any

from bench.common import units

KB_PER_MB = 1024


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def replay_slope_us(resumes: list[float], k: int, *, robust: bool = False) -> float | None:
    """µs of replay per fast-forwarded child in W6s, from the growth of resume times.

    Resume i (0-based) fast-forwards the i answered rounds before it plus the k quick children
    of its own round, then does the same new work every time (k quick children and the next
    interrupt): the slope of its time against i, divided by the k + 1 children a round adds to
    the history, is the cost of replaying one child. The last resume does no new work and is
    left out. ``robust`` takes the Theil-Sen slope (the median of the pairwise slopes), which
    other processes' bursts on a shared machine do not drag; otherwise least squares.
    """
    ys = resumes[:-1]
    if len(ys) < 3:
        return None
    if robust:
        pairs = [(ys[j] - ys[i]) / (j - i) for i in range(len(ys)) for j in range(i + 1, len(ys))]
        return statistics.median(pairs) / (k + 1) * 1e6
    xs = list(range(len(ys)))
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sum((x - mx) ** 2 for x in xs)
    return slope / (k + 1) * 1e6


def replay_cost_us(samples: list[dict[str, Any]], k: int) -> float | None:
    """The replay cost the W6s target is checked on: the engine's own work, noise taken out.

    For each resume, the fastest of the runs with the collector's time subtracted (the usual
    estimate of a CPU cost on a noisy machine, as ``timeit`` advises), then the Theil-Sen slope.
    """
    series = [
        [t - g for t, g in zip(s["resumes"], s["resumes_gc"], strict=True)]
        for s in samples
        if s.get("resumes_gc")
    ]
    if not series:
        return None
    return replay_slope_us([min(column) for column in zip(*series, strict=True)], k, robust=True)


def summarize(raw: dict[str, Any]) -> dict[str, Any]:
    """Add medians and per-unit figures to one worker's result."""
    row = dict(raw)
    samples = raw.get("samples") or []
    row["ok"] = not raw.get("error") and bool(samples)
    row.setdefault("error", None)
    if not row["ok"]:
        row["median_s"] = None
        return row
    workload, size = raw["workload"], raw["size"]
    count, unit = units(workload, size)
    if raw["engine"] == "floor":
        count, unit = samples[0]["extra"]["calls"], "call"
    walls = [s["wall"] for s in samples]
    row["median_s"] = statistics.median(walls)
    cpus = [s.get("cpu") for s in samples]
    row["median_cpu_s"] = statistics.median(cpus) if None not in cpus else None
    row["unit"], row["units"] = unit, count
    if workload in ("W6", "W6s") and samples[0]["resumes"]:
        totals = [sum(s["resumes"]) for s in samples]
        row["resumes_total_s"] = statistics.median(totals)
        row["per_unit_us"] = row["resumes_total_s"] / count * 1e6
        row["first_run_s"] = _median([s["first_run"] for s in samples])
        row["resume_first_s"] = _median([s["resumes"][0] for s in samples if s["resumes"]])
        row["resume_median_s"] = _median([statistics.median(s["resumes"]) for s in samples if s["resumes"]])
        row["resume_last_s"] = _median([s["resumes"][-1] for s in samples if s["resumes"]])
        row["resumes"] = len(samples[0]["resumes"])
        row["pending_after_first_run"] = samples[0]["pending_after_first_run"]
        row["child_executions"] = samples[0]["child_executions"]
        row["resume_last_gc_s"] = _median([s["resumes_gc"][-1] for s in samples if s.get("resumes_gc")])
        if workload == "W6s":
            k = size.get("k", 0)
            raw_slopes = [replay_slope_us(s["resumes"], k) for s in samples]
            row["replay_us_per_child_with_gc"] = _median([x for x in raw_slopes if x is not None])
            row["replay_us_per_child"] = replay_cost_us(samples, k)
    else:
        row["per_unit_us"] = row["median_s"] / count * 1e6
        if workload in ("W6", "W6s"):  # the floor: no resumes, its calls stand for them
            row["resumes_total_s"] = row["median_s"]
    if all(s.get("gc") is not None for s in samples):
        row["gc_s"] = statistics.median(s["gc"] for s in samples)
    row["records"] = samples[0]["records"]
    row["notes"] = sorted({s["extra"]["note"] for s in samples if "note" in s.get("extra", {})})
    if "checkpoints" in samples[0].get("extra", {}):
        row["checkpoints"] = samples[0]["extra"]["checkpoints"]
        row["writes"] = samples[0]["extra"]["writes"]
    if raw.get("rss_peak_kb") is not None:
        row["rss_baseline_mb"] = raw["rss_baseline_kb"] / KB_PER_MB
        row["rss_over_baseline_mb"] = (raw["rss_peak_kb"] - raw["rss_baseline_kb"]) / KB_PER_MB
    return row


def versions(rows: list[dict[str, Any]]) -> dict[str, dict[str, str]]:
    found: dict[str, dict[str, str]] = {}
    for row in rows:
        if row.get("versions"):
            found.setdefault(row["engine"], {}).update(row["versions"])
    return found


def find(doc: dict[str, Any], engine: str, workload: str, store: str = "memory") -> dict[str, Any] | None:
    for row in doc["configs"]:
        if (row["engine"], row["workload"], row["store"]) == (engine, workload, store) and row["ok"]:
            return row
    return None


def _ratio(peer: float | None, ours: float | None) -> float | None:
    if peer is None or ours is None or ours <= 0:
        return None
    return peer / ours


def _target(
    tid: str,
    text: str,
    ratio_or_value: float | None,
    need: float,
    *,
    at_most: bool = False,
    ours: float | None = None,
    peer: float | None = None,
) -> dict[str, Any]:
    met = None
    if ratio_or_value is not None:
        met = ratio_or_value <= need if at_most else ratio_or_value >= need
    return {
        "id": tid,
        "text": text,
        "value": ratio_or_value,
        "need": need,
        "at_most": at_most,
        "ours": ours,
        "peer": peer,
        "met": met,
    }


def targets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """BENCHMARKS.md's targets, each met (True), missed (False) or not measured (None)."""
    out: list[dict[str, Any]] = []
    for w in ("W1", "W2", "W3", "W4", "W5"):
        ours = find(doc, "ours", w)
        o = ours["median_s"] if ours else None
        for peer, need in (("langgraph", 5.0), ("adk", 20.0)):
            p = find(doc, peer, w)
            pv = p["median_s"] if p else None
            out.append(
                _target(
                    f"{w}-{peer}",
                    f"{w} in memory: >= {need:g}x faster than {peer}",
                    _ratio(pv, o),
                    need,
                    ours=o,
                    peer=pv,
                )
            )
    ours6 = find(doc, "ours", "W6")
    if ours6:
        n = ours6["size"]["n"]
        out.append(
            _target(
                "W6-pending",
                f"W6: all {n} interrupts pending after the first run",
                ours6["pending_after_first_run"],
                n,
            )
        )
        out.append(
            _target(
                "W6-reexec",
                f"W6: each resume re-executes only the answered child "
                f"(asking children run at most {2 * n} times in all)",
                ours6["child_executions"],
                2 * n,
                at_most=True,
            )
        )
    o6 = ours6["resumes_total_s"] if ours6 else None
    for peer, need in (("adk", 10.0), ("langgraph", 3.0)):
        p = find(doc, peer, "W6")
        pv = p["resumes_total_s"] if p else None
        out.append(
            _target(
                f"W6-{peer}",
                f"W6: the resumes >= {need:g}x faster than {peer}",
                _ratio(pv, o6),
                need,
                ours=o6,
                peer=pv,
            )
        )
    ours6s = find(doc, "ours", "W6s")
    lg6s = find(doc, "langgraph", "W6s")
    o, pv = (ours6s["resume_last_s"] if ours6s else None), (lg6s["resume_last_s"] if lg6s else None)
    out.append(
        _target(
            "W6s-langgraph",
            "W6s: last resume >= 10x faster than LangGraph's",
            _ratio(pv, o),
            10.0,
            ours=o,
            peer=pv,
        )
    )
    out.append(
        _target(
            "W6s-replay",
            "W6s: replay <= 10 µs per fast-forwarded child (fastest run per resume, collector time out)",
            ours6s.get("replay_us_per_child") if ours6s else None,
            10.0,
            at_most=True,
        )
    )
    ours4 = find(doc, "ours", "W4")
    out.append(
        _target(
            "W4-rss",
            "W4: peak RSS within 20 MB of the post-import baseline",
            ours4.get("rss_over_baseline_mb") if ours4 else None,
            20.0,
            at_most=True,
        )
    )
    for w in ("W1", "W3"):
        django = find(doc, "ours", w, "django-sqlite")
        d = django["median_s"] if django else None
        for peer, need in (("langgraph", 3.0), ("adk", 10.0)):
            p = find(doc, peer, w, "sqlite")
            pv = p["median_s"] if p else None
            out.append(
                _target(
                    f"{w}-sqlite-{peer}",
                    f"{w} on SQLite: Django store >= {need:g}x faster than {peer}'s",
                    _ratio(pv, d),
                    need,
                    ours=d,
                    peer=pv,
                )
            )
    out += next_targets(doc)
    out += dashboard_targets(doc.get("dashboard"))
    out += agent_targets(doc.get("agents"))
    return out


def next_targets(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """BENCHMARKS.md's next targets: the floor, Django replay, group commit on PostgreSQL.

    Read from a later run merged in (``bench.merge``) when there is one.
    """
    concurrency = doc.get("concurrency")
    instructions = doc.get("instructions") or {}
    counts = instructions.get("instructions_per_run") or {}
    later = " (later run)" if doc.get("later") else ""
    doc = doc.get("later") or doc
    out = []
    for w in ("W1", "W2", "W3", "W4", "W5"):
        ours, floor = find(doc, "ours", w), find(doc, "floor", w)
        o, f = (ours["median_s"] if ours else None), (floor["median_s"] if floor else None)
        how = later
        if ours and floor and ours.get("median_cpu_s") and floor.get("median_cpu_s"):
            o, f, how = ours["median_cpu_s"], floor["median_cpu_s"], f"{later}, CPU time"
        ratio = _ratio(o, f)
        if w in counts:  # machine instructions: what the load does not move (bench.engine_callgrind)
            c = counts[w]
            ratio, o, f = _ratio(c["ours"], c["floor"]), None, None
            how = (
                f", machine instructions ({c['ours'] / 1e6:.2f} M against {c['floor'] / 1e6:.2f} M "
                f"a run; engine at {instructions.get('commit', '?')})"
            )
        out.append(
            _target(
                f"{w}-floor",
                f"{w} in memory: within 2x of the plain-asyncio floor{how}",
                ratio,
                2.0,
                at_most=True,
                ours=o,
                peer=f,
            )
        )
    for store in ("django-sqlite", "django-postgres"):
        row = find(doc, "ours", "W6s", store)
        if row is None and store == "django-postgres":
            continue
        out.append(
            _target(
                f"W6s-{store}-replay",
                f"W6s on the Django store ({store[7:]}): replay <= 5 µs per fast-forwarded child{later}",
                row.get("replay_us_per_child") if row else None,
                5.0,
                at_most=True,
            )
        )
    rows = (concurrency or {}).get("rows") or []
    at_100 = next((r for r in rows if r["runs"] == 100), None)
    out.append(
        _target(
            "pg-group-commit",
            "PostgreSQL, 100 concurrent W1 runs: >= 5x the nodes/s of one commit per node",
            at_100["grouped"] / at_100["per_commit"] if at_100 else None,
            5.0,
        )
    )
    return out


DASHBOARD_DATABASES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}


def _p95(figure: dict[str, Any] | None) -> float | None:
    return figure.get("p95_s") if figure else None


def dashboard_targets(dashboard: dict[str, Any] | None) -> list[dict[str, Any]]:
    """BENCHMARKS.md's dashboard figures, per database measured (SQLite when none was)."""
    out: list[dict[str, Any]] = []
    measured = (dashboard or {}).get("databases") or {"sqlite": {}}
    for db, row in measured.items():
        name = DASHBOARD_DATABASES.get(db, db)
        ok = bool(row) and not row.get("error")
        inbox = row.get("inbox") if ok else None
        pages = (inbox or {}).get("pages") or {}
        size = f"{inbox['pending']:,} pending among {inbox['answered']:,} answered" if inbox else "full size"
        worst = max((p["p95_s"] for p in pages.values()), default=None)
        out.append(
            _target(
                f"dash-inbox-{db}",
                f"Dashboard on {name}: inbox page p95 < 100 ms ({size}; worst of first and deep page)",
                worst,
                0.100,
                at_most=True,
                ours=worst,
            )
        )
        counts = [p["queries"] for p in pages.values()]
        at_tenth = [p["queries_at_tenth"] for p in pages.values()]
        out.append(
            _target(
                f"dash-queries-{db}",
                f"Dashboard on {name}: inbox queries per page bounded (no more than with a tenth of the data)",
                max(counts) if counts else None,
                max(at_tenth) if at_tenth else 0,
                at_most=True,
            )
        )
        push = row.get("push") if ok else None
        p = _p95(push.get("from_timestamp")) if push else None
        out.append(
            _target(
                f"dash-push-{db}",
                f"Dashboard on {name}: event push p95 < 50 ms, commit to frame "
                f"({push['events'] if push else 200} events; from the event's timestamp, an upper bound)",
                p,
                0.050,
                at_most=True,
                ours=p,
            )
        )
        answer = row.get("answer") if ok else None
        a = _p95(answer.get("to_completion")) if answer else None
        out.append(
            _target(
                f"dash-answer-{db}",
                f"Dashboard on {name}: answer POST to completion frame p95 < 150 ms "
                f"({answer['samples'] if answer else 20} answers)",
                a,
                0.150,
                at_most=True,
                ours=a,
            )
        )
    return out


def agent_targets(agents: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Within 1.5x of bare pydantic-ai in memory; >= 10x less overhead per model step than google-adk."""
    stores = (agents or {}).get("stores") or {}
    memory = stores.get("memory") or {}
    ok = "ratio" in memory
    adk = (agents or {}).get("adk") or {}
    overhead = memory.get("overhead_ms_per_step") if ok else None
    adk_step = adk.get("ms_per_step")
    versus = None
    if overhead is not None and adk_step is not None:
        versus = adk_step / overhead if overhead > 0 else float("inf")
    return [
        _target(
            "agents-bare",
            "Agent node in memory: within 1.5x of bare pydantic-ai per model step (same FunctionModel)",
            memory.get("ratio") if ok else None,
            1.5,
            at_most=True,
            ours=memory["ours_ms_per_step"] / 1e3 if ok else None,
            peer=memory["bare_ms_per_step"] / 1e3 if ok else None,
        ),
        _target(
            "agents-adk",
            "Agent node: >= 10x less overhead per model step than google-adk's LlmAgent (stub model)",
            versus,
            10.0,
            ours=overhead / 1e3 if overhead is not None else None,
            peer=adk_step / 1e3 if adk_step is not None else None,
        ),
    ]
