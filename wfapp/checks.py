"""System checks: a registered workflow that does not import or validate fails ``manage.py check``;
an open run whose log would not resume on the registered code is a warning."""

from __future__ import annotations

from typing import Any

from django.core import checks
from django.db import DatabaseError

from .registry import load_workflows
from .versions import NOT_DEPLOYED, check_runs

# The newest open runs the warning replays (each reads its log); `manage.py wf replay-check` checks all.
REPLAY_CHECK_RUNS = 100


@checks.register("wfapp")
def check_workflows(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Load every workflow in ``WFAPP_WORKFLOWS`` and report each one that is broken."""
    _, problems = load_workflows()
    return [
        checks.Error(problem.message, hint=problem.hint, obj=problem.path, id=f"wfapp.{problem.code}")
        for problem in problems
    ]


@checks.register("wfapp_runs")
def check_open_runs(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Warn about open runs whose log no longer replays, or whose version is not registered."""
    try:
        results = check_runs(limit=REPLAY_CHECK_RUNS)
    except DatabaseError:
        return []  # no database or no tables yet (before migrate): no runs to check
    return [
        checks.Warning(
            f"Run {result.run} of {result.workflow} would not resume: {result.detail}",
            hint=(
                f"Register version {result.version} of {result.workflow} again (next to the new one)."
                if result.result == NOT_DEPLOYED
                else "Keep the old version registered next to the new one (Workflow(version=...)), "
                "or change the code so this log replays; `manage.py wf replay-check` lists every run."
            ),
            obj=result.run,
            id="wfapp.W002" if result.result == NOT_DEPLOYED else "wfapp.W001",
        )
        for result in results
        if not result.ok
    ]
