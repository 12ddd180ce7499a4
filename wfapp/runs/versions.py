"""Runs and the workflow versions they started on: which can resume here, and whether they replay.

``check_run`` replays a run's log against the code registered for its version
(``engine.replay_check``: nothing runs, nothing is written); the CLI's ``replay-check``,
the system check and the workflow page all use it. A result is kept per run and log length in
this process (the log only grows and the code only changes with the process), so a page that
shows the same open runs again replays none of them. ``export_run`` writes a run as the
recorded log that ``engine.replay_check`` and ``InMemoryEventStore.load`` read.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.db.models import Count

from engine import replay_check
from wfapp.errors import UnknownRunError
from wfapp.human.permissions import workflow_filter
from wfapp.models import RunStatus, Session
from wfapp.registry import all_versions, get_workflow, is_deployed
from wfapp.store.events import DjangoEventStore

OPEN_STATUSES = (RunStatus.RUNNING, RunStatus.WAITING, RunStatus.FAILED)
REPLAYS = "replays"
DIVERGES = "diverges"
NOT_DEPLOYED = "not deployed"


@dataclass(frozen=True, slots=True)
class RunCheck:
    """Whether one run's log replays on the code registered for its version."""

    run: str
    workflow: str
    version: str
    status: str
    result: str  # REPLAYS, DIVERGES or NOT_DEPLOYED
    detail: str
    node_path: str | None = None
    unchecked: tuple[str, ...] = ()  # paths whose dynamic children the check could not match

    @property
    def ok(self) -> bool:
        return self.result == REPLAYS

    def as_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "workflow": self.workflow,
            "version": self.version,
            "status": self.status,
            "result": self.result,
            "detail": self.detail,
            "node_path": self.node_path,
            "unchecked": list(self.unchecked),
        }


def not_deployed_label(session: Session) -> str | None:
    """Say why the run cannot resume here ("version N not deployed"), or None when it can."""
    if is_deployed(session.workflow, session.version):
        return None
    if session.workflow not in all_versions():
        return f"workflow {session.workflow} not deployed"
    return f"version {session.version} not deployed"


def check_run(session: Session) -> RunCheck:
    """Replay one run's log against the code of its version, executing nothing."""
    run = (session.pk, session.workflow, session.version, session.status)
    missing = not_deployed_label(session)
    if missing is not None:
        return RunCheck(*run, result=NOT_DEPLOYED, detail=missing)
    workflow = get_workflow(session.workflow, session.version)
    result, detail, node_path, unchecked = _replayed(session.pk, workflow, session.last_seq)
    return RunCheck(*run, result, detail, node_path, unchecked)


# Keyed by the registered workflow object itself: registering other code (a new deploy, a test's
# settings) makes a new object, so a result is never reused for code it was not checked against.
@lru_cache(maxsize=4096)
def _replayed(run: str, workflow: Any, last_seq: int) -> tuple[str, str, str | None, tuple[str, ...]]:
    """Replay the first ``last_seq`` events of ``run`` (later ones may be appended meanwhile)."""
    events = [event for event in DjangoEventStore().list_events_sync(run) if event.seq <= last_seq]
    report = replay_check(workflow, events)
    return REPLAYS if report.replays else DIVERGES, str(report), report.node_path, tuple(report.unchecked)


def replayed_count() -> int:
    """How many logs this process has replayed to check them (each result then kept)."""
    return _replayed.cache_info().misses


def open_runs(workflow: str | None = None, viewer: Any = None) -> Any:
    """Runs that may still resume: running, waiting or failed (a failed run can be retried); with
    ``viewer``, only those that user may see."""
    rows = Session.objects.filter(status__in=OPEN_STATUSES)
    if viewer is not None:
        rows = rows.filter(workflow_filter(viewer, "view"))
    return rows.filter(workflow=workflow) if workflow else rows


def check_runs(
    workflow: str | None = None, *, finished: int = 0, limit: int | None = None, viewer: Any = None
) -> list[RunCheck]:
    """Check every open run (at most ``limit``, newest first) and ``finished`` recently finished
    ones; with ``viewer``, only those that user may see."""
    rows = list(open_runs(workflow, viewer).order_by("-updated_at", "pk")[:limit])
    if finished:
        done = Session.objects.exclude(status__in=OPEN_STATUSES)
        if workflow:
            done = done.filter(workflow=workflow)
        rows += list(done.order_by("-updated_at", "pk")[:finished])
    return [check_run(row) for row in rows]


def open_counts(workflow: str, viewer: Any = None) -> list[dict[str, Any]]:
    """Open runs of ``workflow`` per version (with ``viewer``: those that user may see), newest
    registered version first, then the rest."""
    counted = {
        row["version"]: row["n"]
        for row in open_runs(workflow, viewer).values("version").annotate(n=Count("pk")).order_by()
    }
    registered = list(reversed(list(all_versions().get(workflow, {}))))
    order = registered + sorted(v for v in counted if v not in registered)
    return [
        {
            "version": version or "(before versions)",
            "open": counted.get(version, 0),
            "deployed": version in registered or not version,
            "newest": bool(registered) and version == registered[0],
        }
        for version in order
    ]


def export_run(session_id: str) -> dict[str, Any]:
    """A run as a recorded log: its record and every event, as JSON-ready data."""
    session = Session.objects.filter(pk=session_id).first()
    if session is None:
        raise UnknownRunError(session_id)
    events = DjangoEventStore().list_events_sync(session_id)
    return {
        "session_id": session.pk,
        "workflow": session.workflow,
        "version": session.version or None,
        "status": session.status,
        "input": session.input,
        "events": [event.model_dump(mode="json") for event in events],
    }
