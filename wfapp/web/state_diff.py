"""Comparing a run's states: what the run held as of one event, and what changed between two.

A snapshot as of seq N folds the log up to N: the run's status, its state (every state delta
applied in order) and each node's latest output. A diff walks two snapshots structurally
(keys of objects, items of lists) and says, for each place that differs, what it was and
what it became, in words rather than JSON.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from django.db.models import Q

from wfapp.errors import BadRequest
from wfapp.models import Event
from wfapp.web.readable import label, rows, summary
from wfapp.web.run_state import Entry, describe_event

MAX_CHANGES = 200  # changes listed in one diff; the rest are counted


class UnknownSeqError(BadRequest):
    """A seq that is not one of the run's events (or is not a number)."""


@dataclass
class Snapshot:
    """The run as of event ``seq``: its status, state and each node's latest output."""

    seq: int
    entry: Entry
    status: str
    state: dict[str, Any] = field(default_factory=dict)
    outputs: dict[str, Any] = field(default_factory=dict)  # node path -> its latest output

    @property
    def when(self) -> datetime:
        return datetime.fromtimestamp(self.entry.timestamp, UTC)

    @property
    def state_rows(self) -> list[Any]:
        return rows(self.state, "State")

    @property
    def output_rows(self) -> list[tuple[str, str]]:
        return [(path, summary(value)) for path, value in self.outputs.items()]

    def as_data(self) -> dict[str, Any]:
        return {"status": self.status, "state": self.state, "outputs": self.outputs}


@dataclass(frozen=True)
class Change:
    """One place where two snapshots differ: added, removed or changed."""

    where: str
    kind: str
    before: str = ""
    after: str = ""


def parse_seq(text: str | None, what: str) -> int | None:
    """A seq from a query parameter; None when absent, ``UnknownSeqError`` when not a number."""
    if text is None or text.strip() == "":
        return None
    try:
        seq = int(text)
    except ValueError:
        raise UnknownSeqError(
            f"The {what} event must be a number (its # in the timeline); got {text[:40]!r}"
        ) from None
    return seq


def _check_seq(seq: int, last_seq: int) -> None:
    if not 1 <= seq <= last_seq:
        span = f"#1 to #{last_seq}" if last_seq else "none yet"
        raise UnknownSeqError(f"This run has no event #{seq}; its events are {span}")


def snapshot(session_id: str, seq: int, last_seq: int) -> Snapshot:
    """The run as of event ``seq`` (two queries); ``UnknownSeqError`` for a seq it does not have."""
    _check_seq(seq, last_seq)
    row = (
        Event.objects.filter(session_id=session_id, seq=seq)
        .values("seq", "timestamp", "kind", "node_path", "author", "data")
        .first()
    )
    if row is None:
        raise UnknownSeqError(f"This run has no event #{seq}")
    entry = describe_event(
        row["seq"], row["timestamp"], row["kind"], row["node_path"], row["author"], row["data"] or {}
    )
    found = Snapshot(seq, entry, "running")
    history = (
        Event.objects.filter(session_id=session_id, seq__lte=seq)
        .filter(Q(kind="status") | Q(data__has_key="state") | Q(data__has_key="output"))
        .order_by("seq")
        .values_list("kind", "node_path", "data")
    )
    for kind, node_path, data in history:
        data = data or {}
        if kind == "status" and isinstance(data.get("status"), str):
            found.status = data["status"]
        if isinstance(data.get("state"), dict):
            found.state.update(data["state"])
        if "output" in data and kind != "status":
            found.outputs[node_path] = data["output"]
    return found


def diff(before: Snapshot, after: Snapshot) -> tuple[list[Change], int]:
    """What changed from ``before`` to ``after`` (at most ``MAX_CHANGES``), and how many more."""
    found: list[Change] = []
    _walk(before.as_data(), after.as_data(), [], found)
    return found[:MAX_CHANGES], max(len(found) - MAX_CHANGES, 0)


_TOP = {"status": "Status", "state": "State", "outputs": "Output of"}


def _where(path: list[Any]) -> str:
    if not path:
        return "(everything)"
    head = _TOP.get(path[0], str(path[0]))
    parts: list[str] = []
    rest = path[1:]
    if path[0] == "outputs" and rest:
        head = f"Output of {rest[0]}"
        rest = rest[1:]
    for key in rest:
        if isinstance(key, int):
            parts.append(f"item {key + 1}")
        else:
            parts.append(label(key))
    return " › ".join([head, *parts])


def _walk(old: Any, new: Any, path: list[Any], found: list[Change]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in old:
            if key not in new:
                found.append(Change(_where([*path, key]), "removed", summary(old[key]), ""))
            else:
                _walk(old[key], new[key], [*path, key], found)
        for key in new:
            if key not in old:
                found.append(Change(_where([*path, key]), "added", "", summary(new[key])))
        return
    if isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            if index >= len(new):
                found.append(Change(_where([*path, index]), "removed", summary(old[index]), ""))
            elif index >= len(old):
                found.append(Change(_where([*path, index]), "added", "", summary(new[index])))
            else:
                _walk(old[index], new[index], [*path, index], found)
        return
    if old != new or type(old) is not type(new):
        found.append(Change(_where(path), "changed", summary(old), summary(new)))


@dataclass
class Comparison:
    """What the run page's compare panel shows: a snapshot, a diff, or why neither."""

    at: int | None = None
    since: int | None = None
    snapshot: Snapshot | None = None
    earlier: Snapshot | None = None
    changes: list[Change] | None = None
    more: int = 0
    error: str = ""

    @property
    def query(self) -> str:
        """The page's query string for this selection (shareable)."""
        parts = []
        if self.at is not None:
            parts.append(f"at={self.at}")
        if self.since is not None:
            parts.append(f"from={self.since}")
        return "&".join(parts)


def compare(session_id: str, last_seq: int, at_text: str | None, from_text: str | None) -> Comparison:
    """The selection given as query parameters ``at`` and ``from``; errors are kept, not raised."""
    result = Comparison()
    try:
        result.at = parse_seq(at_text, "selected")
        result.since = parse_seq(from_text, "earlier")
        if result.at is None and result.since is not None:
            result.at, result.since = result.since, None
        if result.at is None:
            return result
        result.snapshot = snapshot(session_id, result.at, last_seq)
        if result.since is not None:
            result.earlier = snapshot(session_id, result.since, last_seq)
            result.changes, result.more = diff(result.earlier, result.snapshot)
    except UnknownSeqError as bad:
        result.error = str(bad)
        result.snapshot = result.earlier = None
        result.changes = None
    return result
