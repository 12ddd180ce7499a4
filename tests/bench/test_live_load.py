"""The live-load benchmark runs end to end at tiny size: a real server, open pages, answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from bench.live_load import report

ROOT = Path(__file__).resolve().parent.parent.parent


def test_live_load_benchmark_tiny(tmp_path: Path) -> None:
    out = tmp_path / "load.json"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    done = subprocess.run(
        [sys.executable, "-m", "bench.live_load", "--tiny", "--out", str(out)],
        cwd=ROOT,
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    doc = json.loads(out.read_text())
    sqlite = doc["modes"]["sqlite"]
    assert not sqlite.get("error"), f"{sqlite.get('error')}\n{sqlite.get('traceback')}"
    assert done.returncode == 0, done.stderr[-3000:]
    for name, pages in (("baseline", (1, 1)), ("full", (6, 2))):
        phase = sqlite[name]
        assert (phase["pages"]["inbox"], phase["pages"]["run"]) == pages
        assert phase["answers"] == phase["answered_ok"] == 12  # 4 answers/s for 3 s, all through the form
        assert phase["http_5xx"] == 0
        # Every answer reached every open inbox, and every watched run page got its completion.
        assert phase["expected_inbox_updates"] == 12 * pages[0]
        assert phase["inbox_push_s"]["n"] + phase["missed_inbox_updates"] == 12 * pages[0]
        assert phase["run_push_s"]["n"] == pages[1]
        assert phase["answer_s"]["n"] == 12
        assert phase["server_cpu_s_per_answer"] > 0
        assert phase["frames_per_answer_per_socket"]["inbox"] > 0
    text = out.with_suffix(".txt").read_text()
    assert text == report(doc) + "\n"
    assert "inbox push" in text and "each additional open inbox" in text
