"""System checks: a registered workflow that does not import or validate fails ``manage.py check``."""

from __future__ import annotations

from typing import Any

from django.core import checks

from .registry import load_workflows


@checks.register("wfapp")
def check_workflows(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Load every workflow in ``WFAPP_WORKFLOWS`` and report each one that is broken."""
    _, problems = load_workflows()
    return [
        checks.Error(problem.message, hint=problem.hint, obj=problem.path, id=f"wfapp.{problem.code}")
        for problem in problems
    ]
