"""What a run page shows, folded from its event log: pure functions, no database.

Node paths look like `wf@1/step@1/child@2`: the second segment names a node of the workflow's
graph, deeper segments are dynamic children shown under it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from wfapp.web.readable import Row, answer_summary, pretty, preview, row, rows, summary

ANONYMOUS_ACTOR = "user"  # the engine's author for an action nobody was named for
NOT_A_PERSON = "deadline"  # engine.human.DEADLINE_ACTOR: a default answer, an escalation

# What each event kind means for the status of the node at its path; others change nothing.
_NODE_STATUS = {
    "started": "running",
    "completed": "completed",
    "interrupt": "waiting",
    "error": "failed",
}


def split_path(node_path: str) -> list[str]:
    return [part for part in node_path.split("/") if part]


def segment_name(segment: str) -> str:
    """`review_item@3` -> `review_item` (run ids after the last `@`)."""
    name, sep, _ = segment.rpartition("@")
    return name if sep else segment


def node_statuses(
    rows: Iterable[tuple[str, str]],
) -> tuple[dict[str, str], dict[str, list[dict[str, str]]]]:
    """Fold `(kind, node_path)` rows, in log order, into graph-node statuses and children.

    A graph node shows its latest execution's status; its dynamic children (paths one level
    under it) are listed in the order they first appeared, each with its own latest status.
    """
    statuses: dict[str, str] = {}
    children: dict[str, dict[str, str]] = {}
    for kind, node_path in rows:
        status = _NODE_STATUS.get(kind)
        if status is None:
            continue
        parts = split_path(node_path)
        if len(parts) < 2:
            continue
        graph_node = segment_name(parts[1])
        if len(parts) == 2:
            statuses[graph_node] = status
        elif len(parts) == 3:
            children.setdefault(graph_node, {})[node_path] = status
    listed = {
        node: [{"path": path, "status": status} for path, status in paths.items()]
        for node, paths in children.items()
    }
    for node, kids in listed.items():
        # A node still running while a child waits for a person is, as far as anyone can act, waiting.
        if statuses.get(node) == "running" and any(k["status"] == "waiting" for k in kids):
            statuses[node] = "waiting"
    return statuses, listed


def fold_state(deltas: Iterable[Any]) -> dict[str, Any]:
    """Apply state deltas in log order (a later key replaces an earlier one)."""
    state: dict[str, Any] = {}
    for delta in deltas:
        if isinstance(delta, dict):
            state.update(delta)
    return state


@dataclass(frozen=True)
class Entry:
    """One line of the run timeline."""

    seq: int
    timestamp: float
    kind: str
    node_path: str
    title: str
    detail: str = ""  # a one-line preview, in words
    full: str = ""  # the whole value (text, or JSON under its own "As JSON"), when the preview is cut
    actor: str = ""
    values: tuple[Row, ...] = ()  # the value as readable rows, shown unfolded under the preview

    @property
    def by_person(self) -> bool:
        """Whether a person did it (answered, commented, claimed, retried, cancelled, started):
        the timeline's "People's events only" keeps these."""
        return self.actor not in ("", ANONYMOUS_ACTOR, NOT_A_PERSON)

    @property
    def raw(self) -> bool:
        """Whether `full` is the value as JSON (shown apart from the readable rows)."""
        return bool(self.values) and bool(self.full)

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.timestamp, UTC)


def _readable(value: Any) -> tuple[Row, ...]:
    """Rows for a value worth unfolding (a record or a list); none for text or a scalar."""
    return tuple(rows(value, "Value")) if isinstance(value, dict | list) and value else ()


def _with_value(seq: int, ts: float, kind: str, path: str, title: str, value: Any, actor: str = "") -> Entry:
    short = summary(value)
    whole = value if isinstance(value, str) else pretty(value)
    return Entry(seq, ts, kind, path, title, short, whole if whole != short else "", actor, _readable(value))


def describe_event(
    seq: int, timestamp: float, kind: str, node_path: str, author: str, data: dict[str, Any]
) -> Entry:
    """Say what happened, in words, with the value it carried."""
    if kind == "started":
        if "/" not in node_path:  # the workflow itself: a turn of the run begins
            return Entry(seq, timestamp, kind, node_path, "Run started" if seq == 1 else "Run resumed")
        return Entry(seq, timestamp, kind, node_path, "Started")
    if kind == "interrupt":
        ask = data.get("interrupt") or {}
        return Entry(seq, timestamp, kind, node_path, "Asked for input", preview(ask.get("message") or ""))
    if kind == "answer":
        answer = data.get("answer") or {}
        actor = str(answer.get("actor") or author or "")
        title = f"Answered by {actor}" if actor else "Answered"
        if answer.get("request_seq"):  # the asking it was bound to, and what its giver was shown
            shown = f", as shown {str(answer['digest'])[:12]}" if answer.get("digest") else ""
            title += f" (the question asked at #{answer['request_seq']}{shown})"
        value = answer.get("value")
        return Entry(
            seq,
            timestamp,
            kind,
            node_path,
            title,
            answer_summary(value),
            pretty(value),
            actor,
            _readable(value),
        )
    if kind == "assignment":  # a decision on a question (issue 17)
        decided = data.get("assignment") or {}
        words = {"claim": "Claimed", "unclaim": "Released", "reassign": "Reassigned", "escalate": "Escalated"}
        title = f"{words.get(str(decided.get('decision')), 'Reminded')} by {decided.get('actor') or author}"
        whom = ", ".join(map(str, decided.get("users") or []))
        actor = str(decided.get("actor") or author or "") if decided.get("decision") in words else ""
        if decided.get("decision") == "escalate":
            actor = ""  # the clock's
        return Entry(seq, timestamp, kind, node_path, title, f"to {whom}" if whom else "", actor=actor)
    if kind == "error":
        error = data.get("error") or {}
        text = f"{error.get('type', 'Error')}: {error.get('message', '')}"
        return Entry(
            seq, timestamp, kind, node_path, "Error", preview(text, 300), text if len(text) > 300 else ""
        )
    if kind == "retry":
        edited = "input" in data
        title = f"Retried by {author}" if author else "Retried"
        detail = "with an edited input" if edited else ""
        reason = data.get("message")
        if isinstance(reason, str) and reason:
            detail = f"{detail} · {reason}" if detail else reason
        whole = pretty(data["input"]) if edited else ""
        return Entry(seq, timestamp, kind, node_path, title, preview(detail), whole, author)
    if kind == "status":
        status = data.get("status", "changed")
        if status == "cancelled":
            reason = data.get("message")
            title = f"Run cancelled by {author}" if author not in ("", ANONYMOUS_ACTOR) else "Run cancelled"
            detail = preview(reason, 300) if isinstance(reason, str) else ""
            return Entry(seq, timestamp, kind, node_path, title, detail, actor=author)
        return Entry(seq, timestamp, kind, node_path, f"Run {status}")
    if kind == "comment":
        text = str(data.get("message") or "")
        on = (data.get("interrupt") or {}).get("id")
        title = f"Comment by {author}" + (f" on question {on}" if on else "")
        return Entry(
            seq,
            timestamp,
            kind,
            node_path,
            title,
            preview(text, 300),
            text if len(text) > 300 else "",
            author,
        )
    parts = []
    if "output" in data:
        parts.append(("Output", data["output"]))
    if "route" in data:
        parts.append(("Route", data["route"]))
    if "state" in data:
        parts.append(("State change", data["state"]))
    if not parts:
        return Entry(
            seq, timestamp, kind, node_path, "Completed" if kind == "completed" else kind.capitalize()
        )
    if len(parts) == 1:
        return _with_value(seq, timestamp, kind, node_path, parts[0][0], parts[0][1])
    title = " · ".join(name for name, _ in parts)
    short = preview(" · ".join(f"{name}: {summary(value)}" for name, value in parts))
    whole = pretty({name.lower(): value for name, value in parts})
    values = tuple(row(name, value) for name, value in parts)
    return Entry(seq, timestamp, kind, node_path, title, short, whole, values=values)
