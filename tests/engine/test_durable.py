"""Resume from the log alone: a saved JSON log resumed by another process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine import InMemoryEventStore, Runner

from . import durable_app

HERE = Path(__file__).parent


def resume_elsewhere(tmp_path: Path, log: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
    log_file, answers_file = tmp_path / "log.json", tmp_path / "answers.json"
    log_file.write_text(json.dumps(log))
    answers_file.write_text(json.dumps(answers))
    done = subprocess.run(
        [sys.executable, str(HERE / "durable_app.py"), str(log_file), str(answers_file)],
        capture_output=True,
        text=True,
        check=True,
        cwd=HERE.parent.parent,
        env={"PYTHONPATH": str(HERE.parent.parent), "PATH": ""},
    )
    return json.loads(done.stdout)


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    durable_app.CALLS.clear()


async def test_graph_run_resumes_in_another_process(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    runner = Runner(durable_app.graph_workflow, store=store)
    waiting = await runner.run({"order": "A7", "qty": 3})
    assert waiting.status == "waiting"
    assert durable_app.CALLS == {"fetch": 1, "approve": 1, "audit": 1}
    text = json.dumps(store.dump(waiting.session_id))  # the whole log as JSON text

    resumed = resume_elsewhere(tmp_path, json.loads(text), {"approve": True})
    assert resumed["status"] == "completed"
    assert resumed["output"] == {"approved": True, "audit": "audited A7"}
    assert resumed["calls"] == {"decide": 1}  # nothing that completed ran again


async def test_dynamic_run_resumes_in_another_process(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    waiting = await Runner(durable_app.dynamic_workflow, store=store).run({})
    assert [i.id for i in waiting.interrupts] == ["lines"]
    resumed = resume_elsewhere(tmp_path, store.dump(waiting.session_id), {"lines": "fine"})
    assert resumed["status"] == "completed"
    assert resumed["output"] == {"checked": [0, 2, 4], "answer": "fine"}
    assert resumed["calls"] == {"review_lines": 1}  # children fast-forwarded from the log
