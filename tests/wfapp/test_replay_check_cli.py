"""``manage.py wf replay-check`` and ``wf export``, the ``manage.py check`` warning, and the
demos' recorded logs (exported with ``wf export``) replaying on today's code."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError, SystemCheckError

from engine import InMemoryEventStore, Runner, replay_check
from tests.wfapp.helpers import deploy, subprocess_env
from tests.wfapp.versioned import PATHS, v1, v1_reordered
from wfapp.models import Session
from wfapp.registry import get_workflow
from wfapp.runs.checks import check_open_runs

ROOT = Path(__file__).resolve().parents[2]
RECORDED = Path(__file__).parent / "recorded"

# In workers mode the CLI defers to the workers and waits for one: a worker runs meanwhile.
pytestmark = pytest.mark.usefixtures("queue_worker")


def wf(*args: str) -> Any:
    out = StringIO()
    call_command("wf", *args, stdout=out)
    return json.loads(out.getvalue())


def failing_wf(*args: str) -> tuple[Any, str]:
    out = StringIO()
    with pytest.raises(CommandError) as refused:
        call_command("wf", *args, stdout=out)
    return json.loads(out.getvalue()), str(refused.value)


@pytest.fixture
def waiting_run(settings: Any, transactional_db: None) -> str:
    deploy(settings, "v1")
    started = wf("start", "versioned", "--input", '"x"')
    assert started["status"] == "waiting"
    return str(started["run"])


@pytest.mark.parametrize("recorded", sorted(RECORDED.glob("*.json")), ids=lambda p: p.stem)
async def test_the_demos_recorded_logs_replay_and_resume_on_todays_code(recorded: Path) -> None:
    saved = json.loads(recorded.read_text())
    workflow = get_workflow(saved["workflow"])

    assert replay_check(workflow, saved).replays

    # The log is a real one: resumed in memory, it goes on from where it was exported.
    store = InMemoryEventStore.load({**saved, "version": workflow.version})
    result = await Runner(workflow, store=store).result(saved["session_id"])
    assert result.status == "waiting" and result.interrupts


def test_list_and_show_name_the_versions(settings: Any, waiting_run: str) -> None:
    deploy(settings, "v1", "v2")
    listed = {item["name"]: item for item in wf("list")}
    assert (listed["versioned"]["version"], listed["versioned"]["versions"]) == ("2", ["1", "2"])
    assert wf("show", waiting_run)["version"] == "1"


def test_replay_check_passes_when_every_open_run_replays(waiting_run: str) -> None:
    report = wf("replay-check")

    assert (report["checked"], report["replays"], report["failing"]) == (1, 1, 0)
    [run] = report["runs"]
    assert (run["run"], run["version"], run["result"], run["detail"]) == (
        waiting_run,
        "1",
        "replays",
        "replays",
    )
    assert run["unchecked"] == []  # every dynamic child could be matched (there are none here)


def test_replay_check_fails_naming_the_run_and_the_path(settings: Any, waiting_run: str) -> None:
    deploy(settings, "v1_reordered")

    report, message = failing_wf("replay-check", "--workflow", "versioned")

    [run] = report["runs"]
    assert (run["result"], run["node_path"]) == ("diverges", "versioned@1/prepare@1")
    assert "now comes after 'ask'" in run["detail"]
    assert message.startswith("1 of 1 runs would not resume on this code") and waiting_run in message


def test_replay_check_fails_when_a_runs_version_is_not_deployed(settings: Any, waiting_run: str) -> None:
    deploy(settings, "v2")

    report, message = failing_wf("replay-check")

    [run] = report["runs"]
    assert (run["result"], run["detail"]) == ("not deployed", "version 1 not deployed")
    assert "version 1 not deployed" in message


def test_finished_runs_are_checked_only_with_all(settings: Any, waiting_run: str) -> None:
    wf("cancel", waiting_run)
    assert wf("replay-check")["checked"] == 0

    deploy(settings, "v1_reordered")
    report, _ = failing_wf("replay-check", "--all")
    assert [run["status"] for run in report["runs"]] == ["cancelled"]
    assert wf("replay-check", "--all", "--sample", "0")["checked"] == 0


def test_replay_check_refuses_an_unknown_workflow(transactional_db: None) -> None:
    with pytest.raises(CommandError, match="Unknown workflow 'nope'"):
        call_command("wf", "replay-check", "--workflow", "nope", stdout=StringIO())


def test_the_exit_status_gates_a_deploy(waiting_run: str) -> None:
    def replay_check_with(extra: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "manage.py", "wf", "replay-check"],
            cwd=ROOT,
            env=subprocess_env(WFAPP_EXTRA_WORKFLOWS=extra),
            capture_output=True,
            text=True,
            timeout=180,
        )

    ok = replay_check_with(PATHS["v1"])
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["replays"] == 1

    broken = replay_check_with(PATHS["v1_reordered"])
    assert broken.returncode == 1
    assert waiting_run in broken.stderr and "versioned@1/prepare@1" in broken.stderr


def test_an_export_is_a_recorded_log_replay_check_accepts(waiting_run: str, tmp_path: Path) -> None:
    target = tmp_path / "run.json"
    written = wf("export", waiting_run, "--output", str(target))
    saved = json.loads(target.read_text())

    assert written == {"run": waiting_run, "written": str(target), "events": len(saved["events"])}
    assert (saved["workflow"], saved["version"], saved["status"]) == ("versioned", "1", "waiting")
    assert saved == wf("export", waiting_run)  # the same JSON on standard output
    assert replay_check(v1, saved).replays
    assert str(replay_check(v1_reordered, saved)).startswith("diverges at versioned@1/prepare@1")

    # A user's test resumes it in memory on the code it was recorded on.
    resumed = Runner(v1, store=InMemoryEventStore.load(saved)).resume(waiting_run, {"ok": "yes"})
    result = asyncio.run(resumed)
    assert (result.status, result.output) == ("completed", "v1 finished with yes")


def test_export_refuses_an_unknown_run(transactional_db: None) -> None:
    with pytest.raises(CommandError, match="Unknown run 'nope'"):
        call_command("wf", "export", "nope", stdout=StringIO())


def test_manage_py_check_warns_about_runs_that_would_not_resume(settings: Any, waiting_run: str) -> None:
    assert check_open_runs() == []

    deploy(settings, "v1_reordered")
    [warning] = check_open_runs()
    assert (warning.id, warning.obj) == ("wfapp.W001", waiting_run)
    assert "versioned@1/prepare@1" in warning.msg
    call_command("check", stdout=StringIO(), stderr=StringIO())  # a warning does not fail the check
    with pytest.raises(SystemCheckError, match=waiting_run):
        call_command("check", fail_level="WARNING", stdout=StringIO(), stderr=StringIO())

    deploy(settings, "v2")
    [warning] = check_open_runs()
    assert warning.id == "wfapp.W002" and "version 1 not deployed" in warning.msg
    assert Session.objects.get(pk=waiting_run).status == "waiting"  # checking changed nothing
