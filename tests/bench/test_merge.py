"""bench.merge: a partial run kept beside the full one, its concurrency figures with it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import merge, report, run, summary


def _row(engine: str, workload: str, seconds: float) -> dict[str, Any]:
    return {"engine": engine, "workload": workload, "store": "memory", "ok": True, "median_s": seconds}


def test_a_partial_run_is_kept_beside_the_full_one_with_its_concurrency() -> None:
    full = {"configs": [_row("ours", "W1", 0.004), _row("adk", "W1", 0.3)], "concurrency": None}
    later = {
        "command": "bench/run.py --only floor,ours --out /some/where/later.json",
        "generated_at": "2026-12-01T15:00:00+00:00",
        "git": {"commit": "abc1234"},
        "configs": [
            {**_row("ours", "W1", 0.003), "load_before": 1.0, "load_after": 2.5},
            {**_row("floor", "W1", 0.002), "load_before": 0.5, "load_after": 1.5},
        ],
        "concurrency": {"rows": [{"runs": 100, "nodes": 200, "per_commit": 60.0, "grouped": 420.0}]},
    }
    doc = merge.merged(full, later)
    assert doc["configs"] == full["configs"]  # the peers' rows stay as measured
    assert doc["later"]["command"] == "bench/run.py --only floor,ours --out later.json"
    assert (doc["later"]["commit"], doc["later"]["load"]) == ("abc1234", "0.5 to 2.5")
    targets = {t["id"]: t for t in summary.next_targets(doc)}
    assert targets["W1-floor"]["value"] == 1.5  # ours against the floor of the later run
    assert targets["pg-group-commit"]["value"] == 7.0


def test_a_partial_run_without_concurrency_keeps_the_full_runs() -> None:
    kept = {"rows": [{"runs": 100, "nodes": 200, "per_commit": 60.0, "grouped": 300.0}]}
    full = {"configs": [], "concurrency": kept}
    later = {"command": "bench/run.py", "generated_at": "now", "configs": [], "concurrency": None}
    assert merge.merged(full, later)["concurrency"] == kept


def test_a_partial_run_brings_its_agent_figures() -> None:
    agents = {"stores": {"memory": {"overhead_ms_per_step": 0.2}}, "adk": {"ms_per_step": 2.0}}
    full = {"configs": [], "agents": {"stores": {}, "adk": None}}
    later = {"command": "bench/run.py", "generated_at": "now", "configs": [], "agents": agents}
    assert merge.merged(full, later)["agents"] == agents


def test_a_partial_run_never_overwrites_the_file_it_merges_into(tmp_path: Path) -> None:
    results = tmp_path / "results.json"
    args = run.parse_args(["--only", "floor,ours", "--merge-into", str(results)])
    assert args.out.parent != tmp_path and args.out.name == "later.json"
    with pytest.raises(SystemExit):
        run.parse_args(["--merge-into", str(results), "--out", str(results)])


def test_instruction_counts_decide_the_floor_targets_when_merged(tmp_path: Path) -> None:
    later = {
        "command": "bench/run.py",
        "generated_at": "now",
        "configs": [_row("ours", "W1", 0.006), _row("floor", "W1", 0.002)],  # 3x in time
    }
    results, counts = tmp_path / "results.json", tmp_path / "instructions.json"
    results.write_text(json.dumps(merge.merged({"configs": []}, later)))
    counts.write_text(
        json.dumps(
            {"commit": "abc1234", "instructions_per_run": {"W1": {"floor": 10_000_000, "ours": 17_500_000}}}
        )
    )
    sys.argv = ["bench.merge", str(results), "--instructions", str(counts)]
    merge.main()

    doc = json.loads(results.read_text())
    targets = {t["id"]: t for t in summary.next_targets(doc)}
    assert targets["W1-floor"]["value"] == 1.75 and targets["W1-floor"]["met"] is True
    assert "machine instructions" in targets["W1-floor"]["text"] and "abc1234" in targets["W1-floor"]["text"]
    assert "| W1 chain | 10.00 M | 17.50 M | 1.75x |" in report.instructions_section(doc)
