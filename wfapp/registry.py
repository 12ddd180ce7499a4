"""The registered workflows: loaded from ``settings.WFAPP_WORKFLOWS`` ("module:attribute").

Several entries may name one workflow with different versions (``Workflow(version=...)``):
the **newest** is the one listed last. New runs start on the newest; a run resumes on the
version it started on while that version is listed.
"""

from __future__ import annotations

import importlib
import traceback
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db.models import Q
from jsonschema.exceptions import SchemaError
from jsonschema.validators import validator_for

from engine.patterns import unsafe_patterns
from wfapp.errors import UnknownWorkflowError, VersionNotDeployedError


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
        schema = workflow.input_json_schema
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
        unsafe = unsafe_patterns(schema)
        if unsafe:
            return Problem(
                path, "E004", f"Workflow '{path}' has an input schema refused: {'; '.join(unsafe)}"
            )
    return None


def load_versions(paths: list[str] | None = None) -> tuple[dict[str, dict[str, Any]], list[Problem]]:
    """Import and check every path; return the usable workflows by name and version, and the problems.

    Within one name, versions are in the order they are listed: the last is the newest.
    """
    workflows: dict[str, dict[str, Any]] = {}
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
        elif workflow.version in workflows.get(workflow.name, {}):
            problems.append(
                Problem(
                    path,
                    "E005",
                    f"Workflow '{path}' reuses the name '{workflow.name}' with the same version "
                    f"'{workflow.version}'.",
                    hint="Give each registered revision of a workflow its own Workflow(version=...).",
                )
            )
        else:
            workflows.setdefault(workflow.name, {})[workflow.version] = workflow
    return workflows, problems


def load_workflows(paths: list[str] | None = None) -> tuple[dict[str, Any], list[Problem]]:
    """Import and check every path; return the newest usable workflow by name and the problems."""
    versions, problems = load_versions(paths)
    return {name: _newest(found) for name, found in versions.items()}, problems


def _newest(versions: dict[str, Any]) -> Any:
    return next(reversed(versions.values()))


@lru_cache(maxsize=8)
def _registry(paths: tuple[str, ...]) -> dict[str, dict[str, Any]]:
    workflows, _ = load_versions(list(paths))
    return workflows


def all_versions() -> dict[str, dict[str, Any]]:
    """Every usable registered workflow by name, then by version (oldest listed first)."""
    return {name: dict(found) for name, found in _registry(tuple(settings.WFAPP_WORKFLOWS)).items()}


def all_workflows() -> dict[str, Any]:
    """The newest version of every usable registered workflow, by name, in registration order."""
    return {name: _newest(found) for name, found in _registry(tuple(settings.WFAPP_WORKFLOWS)).items()}


def get_workflow(name: str, version: str | None = None) -> Any:
    """The registered workflow called ``name``: the newest, or exactly ``version``.

    Raises ``UnknownWorkflowError`` if no version of it is registered, and
    ``VersionNotDeployedError`` if ``version`` is not (a run recorded before versions existed
    has the version ``None`` or ``""`` and gets the newest).
    """
    found = _registry(tuple(settings.WFAPP_WORKFLOWS)).get(name)
    if found is None:
        raise UnknownWorkflowError(name, sorted(all_workflows()))
    if not version:
        return _newest(found)
    try:
        return found[version]
    except KeyError:
        raise VersionNotDeployedError(name, version, list(found)) from None


def drawable_workflow(name: str, version: str | None) -> Any:
    """The workflow a run page draws and reads: the run's own version, else the newest, else None."""
    found = _registry(tuple(settings.WFAPP_WORKFLOWS)).get(name)
    if not found:
        return None
    return found.get(version or "") or _newest(found)


def undeployed_runs() -> Q | None:
    """Runs of a registered workflow whose version is not registered (None: no workflow is)."""
    match: Q | None = None
    for name, versions in all_versions().items():
        missing = Q(workflow=name) & ~Q(version="") & ~Q(version__in=list(versions))
        match = missing if match is None else match | missing
    return match


def is_deployed(name: str, version: str | None) -> bool:
    """Whether a run of ``name`` that started on ``version`` can resume here."""
    found = _registry(tuple(settings.WFAPP_WORKFLOWS)).get(name)
    return found is not None and (not version or version in found)


def requester_may_approve(name: str) -> bool:
    """Whether the workflow ``name`` lets a run's requester answer its own approval questions
    (``settings.WFAPP_REQUESTER_MAY_APPROVE``; four-eyes is the default)."""
    return name in getattr(settings, "WFAPP_REQUESTER_MAY_APPROVE", ())
