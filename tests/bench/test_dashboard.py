"""The dashboard benchmark runs end to end at tiny size: seeded inbox, real server, websockets."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench import summary
from bench.dashboard_report import dashboard_section

ROOT = Path(__file__).resolve().parent.parent.parent


def test_dashboard_benchmark_tiny(tmp_path: Path) -> None:
    out = tmp_path / "dashboard.json"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "bench.dashboard", "--tiny", "--out", str(out)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    doc = json.loads(out.read_text())
    for db, row in doc["databases"].items():
        assert not row.get("error"), f"{db}: {row.get('error')}\n{row.get('traceback')}"
    assert done.returncode == 0, done.stderr[-3000:]
    sqlite = doc["databases"]["sqlite"]
    inbox = sqlite["inbox"]
    assert (inbox["pending"], inbox["answered"]) == (200, 2000)
    assert inbox["listed"] == {"first": 25, "deep": 25, "deep_htmx": 25}
    assert inbox["bounded_queries"]
    assert sqlite["push"]["from_timestamp"]["n"] == 20
    assert sqlite["push"]["from_commit"]["n"] == 20  # the server noted every commit
    assert sqlite["answer"]["to_completion"]["n"] == 5

    targets = {t["id"]: t for t in summary.dashboard_targets(doc)}
    for figure in ("inbox", "queries", "push", "answer"):
        assert targets[f"dash-{figure}-sqlite"]["value"] is not None
    section = "\n".join(dashboard_section(doc))
    assert "Event push" in section and "Answer POST to the completion frame" in section


def test_dashboard_targets_not_measured() -> None:
    rows = summary.dashboard_targets(None)
    assert [t["id"] for t in rows] == [
        "dash-inbox-sqlite",
        "dash-queries-sqlite",
        "dash-push-sqlite",
        "dash-answer-sqlite",
    ]
    assert all(t["met"] is None for t in rows)
