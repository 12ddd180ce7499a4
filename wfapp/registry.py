"""The registered workflows: loaded from ``settings.WFAPP_WORKFLOWS`` ("module:attribute")."""

from __future__ import annotations

import importlib
import traceback
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from .errors import UnknownWorkflowError


@dataclass(frozen=True, slots=True)
class Problem:
    """Why one registered path does not give a usable workflow."""

    path: str
    code: str
    message: str
    hint: str | None = None


def _import(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    if not module_name or not attribute:
        raise LookupError(f"'{path}' is not of the form 'module:attribute'")
    module = importlib.import_module(module_name)
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise LookupError(f"module '{module_name}' has no attribute '{attribute}'") from None


def _validate(path: str, workflow: Any) -> Problem | None:
    from engine import Workflow

    if not isinstance(workflow, Workflow):
        return Problem(
            path, "E003", f"Workflow '{path}' is a {type(workflow).__name__}, not an engine.Workflow."
        )
    try:
        description = workflow.describe()
        schema = workflow.input_schema
    except Exception as exc:
        return Problem(path, "E004", f"Workflow '{path}' does not validate: {type(exc).__name__}: {exc}")
    if not isinstance(description, dict) or description.get("name") != workflow.name:
        return Problem(
            path, "E004", f"Workflow '{path}' does not validate: describe() must name the workflow."
        )
    if schema is not None:
        try:
            validator_for(schema).check_schema(schema)
        except SchemaError as exc:
            return Problem(path, "E004", f"Workflow '{path}' has an invalid input schema: {exc.message}")
    return None


def load_workflows(paths: list[str] | None = None) -> tuple[dict[str, Any], list[Problem]]:
    """Import and check every path; return the usable workflows by name and the problems."""
    workflows: dict[str, Any] = {}
    problems: list[Problem] = []
    for path in settings.WFAPP_WORKFLOWS if paths is None else paths:
        try:
            workflow = _import(path)
        except Exception as exc:
            frames = [
                f for f in traceback.extract_tb(exc.__traceback__) if not f.filename.startswith("<frozen")
            ]
            where = f" (at {frames[-1].filename}:{frames[-1].lineno})" if len(frames) > 1 else ""
            problems.append(
                Problem(
                    path,
                    "E001",
                    f"Workflow '{path}' does not import: {type(exc).__name__}: {exc}{where}",
                    hint="Fix the workflow module or remove it from WFAPP_WORKFLOWS.",
                )
            )
            continue
        problem = _validate(path, workflow)
        if problem is not None:
            problems.append(problem)
        elif workflow.name in workflows:
            problems.append(Problem(path, "E005", f"Workflow '{path}' reuses the name '{workflow.name}'."))
        else:
            workflows[workflow.name] = workflow
    return workflows, problems


@lru_cache(maxsize=8)
def _registry(paths: tuple[str, ...]) -> dict[str, Any]:
    workflows, _ = load_workflows(list(paths))
    return workflows


def all_workflows() -> dict[str, Any]:
    """Every usable registered workflow, by name, in registration order."""
    return dict(_registry(tuple(settings.WFAPP_WORKFLOWS)))


def get_workflow(name: str) -> Any:
    """The registered workflow called ``name``; ``UnknownWorkflowError`` if there is none."""
    try:
        return _registry(tuple(settings.WFAPP_WORKFLOWS))[name]
    except KeyError:
        raise UnknownWorkflowError(name, sorted(all_workflows())) from None
