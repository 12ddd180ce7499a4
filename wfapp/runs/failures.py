"""What a run's failures offer an operator: each node that failed, its attempts with their
errors, times and tracebacks, the retries people made, and the schema of the node's input;
which nodes take a human step's result as input (never edited), and which inputs were edited.

Read from the event log in one query: a node's attempts are its ``started``, ``error`` and
``completed`` events (an ``error`` without a ``started`` before it is a retry within the same
execution, by the node's ``RetryConfig``), its retries the ``retry`` events at its path.
Functions here are synchronous (they query).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db.models import Subquery

from engine import JoinNode
from engine.values import json_schema
from wfapp.models import Event

_ATTEMPT_KINDS = ("started", "error", "completed", "retry")


@dataclass
class Attempt:
    """One attempt of a node: when it began and ended, and how."""

    number: int
    began: float
    ended: float | None = None
    outcome: str = "running"  # running, failed, completed
    error_type: str = ""
    message: str = ""
    traceback: str = ""
    seq: int = 0  # the event that ended it

    @property
    def began_at(self) -> datetime:
        return datetime.fromtimestamp(self.began, UTC)

    @property
    def ended_at(self) -> datetime | None:
        return None if self.ended is None else datetime.fromtimestamp(self.ended, UTC)


@dataclass
class Retry:
    """Someone retried the run from this node (``edited``: with a new input for it)."""

    seq: int
    timestamp: float
    actor: str
    edited: bool
    reason: str = ""

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp, UTC)


@dataclass
class NodeFailures:
    """A node that failed at least once: its attempts (oldest first) and the retries made."""

    path: str
    attempts: list[Attempt] = field(default_factory=list)
    retries: list[Retry] = field(default_factory=list)
    last_input: Any = None  # the input its latest failed attempt got (None when not kept)
    has_input: bool = False

    @property
    def failed(self) -> bool:
        """Whether its latest attempt failed: it is one of the nodes a retry can name."""
        return bool(self.attempts) and self.attempts[-1].outcome == "failed"

    @property
    def last_error(self) -> Attempt | None:
        return next((a for a in reversed(self.attempts) if a.outcome == "failed"), None)


def node_failures(session_id: str) -> list[NodeFailures]:
    """Every node of the run that ever failed, in the order they first failed (one query)."""
    failed_paths = Event.objects.filter(session_id=session_id, kind="error").values("node_path")
    rows = (
        Event.objects.filter(
            session_id=session_id, kind__in=_ATTEMPT_KINDS, node_path__in=Subquery(failed_paths)
        )
        .order_by("seq")
        .values_list("seq", "timestamp", "kind", "node_path", "author", "data")
    )
    nodes: dict[str, NodeFailures] = {}
    for seq, timestamp, kind, path, author, data in rows:
        node = nodes.setdefault(path, NodeFailures(path))
        _fold(node, seq, timestamp, kind, author, data or {})
    ordered = sorted(
        nodes.values(), key=lambda n: next((a.seq for a in n.attempts if a.outcome == "failed"), 0)
    )
    return ordered


def failed_node(session_id: str) -> str:
    """The path of the node a failed run failed at (the latest failed one; "" if none is logged)."""
    failed = [node for node in node_failures(session_id) if node.failed]
    return failed[-1].path if failed else ""


def _fold(
    node: NodeFailures, seq: int, timestamp: float, kind: str, author: str, data: dict[str, Any]
) -> None:
    attempts = node.attempts
    if kind == "retry":
        reason = data.get("message")
        node.retries.append(
            Retry(seq, timestamp, author, "input" in data, reason if isinstance(reason, str) else "")
        )
        return
    if kind == "started":
        attempts.append(Attempt(len(attempts) + 1, timestamp))
        return
    current = attempts[-1] if attempts and attempts[-1].outcome == "running" else None
    if current is None:  # the next attempt of one execution (RetryConfig) began when the last ended
        began = attempts[-1].ended if attempts and attempts[-1].ended is not None else timestamp
        current = Attempt(len(attempts) + 1, began)
        attempts.append(current)
    current.ended, current.seq = timestamp, seq
    if kind == "completed":
        current.outcome = "completed"
        return
    error = data.get("error") or {}
    current.outcome = "failed"
    current.error_type = str(error.get("type") or "Error")
    current.message = str(error.get("message") or "")
    current.traceback = str(error.get("traceback") or "")
    node.has_input = "input" in data
    node.last_input = data.get("input")


def node_of(workflow: Any, node_path: str) -> Any:
    """The graph node at ``node_path`` (``wf@1/name@1``), or None for a dynamic child."""
    parts = node_path.split("/")
    if len(parts) != 2:
        return None
    return workflow.graph.nodes.get(parts[1].rpartition("@")[0])


def input_schema(workflow: Any, node_path: str) -> dict[str, Any] | None:
    """The JSON Schema of the node's input: its declared type, or for a node that takes the
    run's start input, the workflow's input schema; None when nothing declares it."""
    node = node_of(workflow, node_path)
    if node is None:
        return None
    if node.input_type is not None:
        return json_schema(node.input_type)
    if node in workflow.graph.start_targets:
        schema: dict[str, Any] | None = workflow.input_json_schema
        return schema
    return None


def takes_start_input(workflow: Any, node_path: str) -> bool:
    """Whether the node gets the run's start input (a node right after START)."""
    node = node_of(workflow, node_path)
    return node is not None and node in workflow.graph.start_targets


@dataclass(frozen=True)
class EditedInput:
    """A retry that replaced a failed node's input: what the run did after it derives from it."""

    seq: int
    node: str
    actor: str
    reason: str


def edited_inputs(session_id: str) -> list[EditedInput]:
    """The run's retries with an edited input, oldest first (one query)."""
    rows = (
        Event.objects.filter(session_id=session_id, kind="retry")
        .order_by("seq")
        .values_list("seq", "node_path", "author", "data")
    )
    return [
        EditedInput(seq, path, author, str((data or {}).get("message") or ""))
        for seq, path, author, data in rows
        if "input" in (data or {})
    ]


def human_step_feeding(session_id: str, workflow: Any, node_path: str) -> str | None:
    """The path of a step of the run that asked people and whose result ``node_path`` takes as
    its input (None: none does). A graph node is fed by its predecessors (through joins); a
    dynamic child by the node that called it, so any question asked under that node counts."""
    asked = sorted(
        set(
            Event.objects.filter(session_id=session_id, kind="interrupt")
            .values_list("node_path", flat=True)
            .distinct()
        )
    )
    parts = node_path.split("/")
    if len(parts) > 2:
        caller = "/".join(parts[:-1])
        return next((path for path in asked if path == caller or path.startswith(caller + "/")), None)
    feeders = _feeders(workflow, parts[-1].rpartition("@")[0])
    return next((path for path in asked if _graph_node(path) in feeders), None)


def _graph_node(path: str) -> str:
    """The name of the graph node a path is in (``wf@1/review@2/child@1`` -> ``review``)."""
    parts = path.split("/")
    return parts[1].rpartition("@")[0] if len(parts) > 1 else ""


def _feeders(workflow: Any, name: str) -> set[str]:
    """The graph nodes whose output becomes ``name``'s input: its predecessors, and those of a join."""
    graph = workflow.graph
    found: set[str] = set()
    todo = list(graph.predecessors.get(name, []))
    while todo:
        source = todo.pop()
        if source in found:
            continue
        found.add(source)
        if isinstance(graph.nodes.get(source), JoinNode):
            todo.extend(graph.predecessors.get(source, []))
    return found
