"""The registry and its system checks: a broken workflow fails ``manage.py check``, named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import SystemCheckError

from tests.wfapp.helpers import subprocess_env
from wfapp.errors import UnknownWorkflowError
from wfapp.registry import all_workflows, get_workflow
from wfapp.runs.checks import check_workflows

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "tests.wfapp.broken"


def test_demos_are_registered_and_described() -> None:
    workflows = all_workflows()
    assert list(workflows)[:3] == ["expense_approval", "document_review", "batch_review"]
    described = get_workflow("expense_approval").describe()
    names = {n["name"] for n in described["nodes"]}
    assert {"triage", "manager_review", "manager_approval", "finance_approval", "combine"} <= names
    assert check_workflows() == []


def test_unknown_workflow_lists_the_registered_ones() -> None:
    with pytest.raises(UnknownWorkflowError, match=r"registered: .*expense_approval"):
        get_workflow("nope")


@pytest.mark.parametrize(
    ("path", "code", "text"),
    [
        (f"{BROKEN}.bad_graph:bad_graph", "wfapp.E001", "rule 2 (START)"),
        (f"{BROKEN}.missing:flow", "wfapp.E001", "No module named"),
        (f"{BROKEN}.flows:nothing_here", "wfapp.E001", "has no attribute 'nothing_here'"),
        (f"{BROKEN}.flows", "wfapp.E001", "not of the form 'module:attribute'"),
        (f"{BROKEN}.flows:not_a_workflow", "wfapp.E003", "is a str, not an engine.Workflow"),
    ],
)
def test_check_names_the_broken_workflow(settings: object, path: str, code: str, text: str) -> None:
    settings.WFAPP_WORKFLOWS = [f"{BROKEN}.flows:fine", path]  # type: ignore[attr-defined]
    [error] = check_workflows()
    assert (error.id, error.obj) == (code, path)
    assert path in error.msg and text in error.msg
    with pytest.raises(SystemCheckError, match=path.replace(".", r"\.")):
        call_command("check", tags=["wfapp"])
    assert list(all_workflows()) == ["fine_flow"]


def test_check_refuses_two_workflows_with_one_name(settings: object) -> None:
    settings.WFAPP_WORKFLOWS = [f"{BROKEN}.flows:fine", f"{BROKEN}.flows:same_name"]  # type: ignore[attr-defined]
    [error] = check_workflows()
    assert error.id == "wfapp.E005" and "reuses the name 'fine_flow'" in error.msg


def test_manage_py_check_fails_on_a_broken_workflow() -> None:
    env = subprocess_env(WFAPP_EXTRA_WORKFLOWS=f"{BROKEN}.bad_graph:bad_graph")
    done = subprocess.run(
        [sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 1
    assert f"{BROKEN}.bad_graph:bad_graph" in done.stderr and "rule 2" in done.stderr
    ok = subprocess.run(
        [sys.executable, "manage.py", "check"],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ok.returncode == 0, ok.stderr
