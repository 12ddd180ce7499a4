"""Values as a person reads them: an answer as one line, a payload or output as labelled rows."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from wfapp.schema_forms.words import humanize

PREVIEW_CHARS = 160
DECISION_KEYS = ("approved", "approve")


def preview(value: Any, limit: int = PREVIEW_CHARS) -> str:
    """A one-line JSON preview of `value`, cut to `limit` characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def pretty(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)


@dataclass
class Row:
    label: str
    text: str
    block: bool  # nested values show as formatted JSON, long text as a paragraph of its own
    columns: list[str] = field(default_factory=list)  # a list of like records shows as a table
    cells: list[list[str]] = field(default_factory=list)


MAX_TABLE_ROWS = 200
LONG_TEXT = 80  # longer strings, and any with a line break, read better as a block


def label(key: Any) -> str:
    """A key as people write it: "order_id" -> "Order ID" (see `humanize`)."""
    return humanize(str(key))


def scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "Yes" if value else "No"
    return "—" if value is None else str(value)


def flat(value: Any) -> str | None:
    """One line for a scalar, a list of scalars or a record of scalars; None for deeper values."""
    if isinstance(value, list) and not any(isinstance(v, dict | list) for v in value):
        return ", ".join(scalar(v) for v in value) if value else "none"
    if isinstance(value, dict) and not any(isinstance(v, dict | list) for v in value.values()):
        return " · ".join(f"{label(k)}: {scalar(v)}" for k, v in value.items()) if value else "none"
    if isinstance(value, dict | list):
        return None
    return scalar(value)


def table(name: str, value: Any) -> Row | None:
    """A list of flat records as a table, one column per key in first-seen order."""
    if not isinstance(value, list) or not value or len(value) > MAX_TABLE_ROWS:
        return None
    if not all(isinstance(r, dict) and all(flat(v) is not None for v in r.values()) for r in value):
        return None
    keys = list(dict.fromkeys(k for record in value for k in record))
    cells = [[flat(record[k]) or "" if k in record else "" for k in keys] for record in value]
    return Row(name, "", False, [label(k) for k in keys], cells)


def row(name: str, value: Any) -> Row:
    found = table(name, value)
    if found is not None:
        return found
    if isinstance(value, str) and ("\n" in value or len(value) > LONG_TEXT):
        return Row(name, value, True)
    text = flat(value)
    return Row(name, pretty(value), True) if text is None else Row(name, text, False)


def rows(value: Any, whole: str = "Value") -> list[Row]:
    """One row per top-level key of a dict; a single row (named `whole`) for anything else."""
    if value is None:
        return []
    if not isinstance(value, dict):
        return [row(whole, value)]
    return [row(label(key), item) for key, item in value.items()]


def count(value: Any) -> str:
    """A nested value in words: "3 items", "2 fields"."""
    n = len(value) if isinstance(value, dict | list) else 0
    noun = "field" if isinstance(value, dict) else "item"
    return f"{n} {noun}{'' if n == 1 else 's'}"


def summary(value: Any) -> str:
    """A value in one line of words ("Sku: A1 · Outcome: passed"); nested parts are counted
    ("Items: 3 items"), never shown as JSON."""
    if isinstance(value, str):
        return preview(value)
    text = flat(value)
    if text is not None:
        return preview(text)
    if isinstance(value, dict):
        return preview(" · ".join(f"{label(k)}: {flat(v) or count(v)}" for k, v in value.items()))
    return preview(", ".join(flat(v) or count(v) for v in value) if isinstance(value, list) else str(value))


def answer_summary(value: Any) -> str:
    """An answer in one line: "Approved · Comment: fine", with empty optional fields left out."""
    if not isinstance(value, dict):
        return preview(scalar(value) if isinstance(value, bool) or value is None else value)
    decision: list[str] = []
    parts: list[str] = []
    for key, item in value.items():
        if key in DECISION_KEYS and isinstance(item, bool):
            decision.append("Approved" if item else "Rejected")
        elif item not in ("", None, [], {}):
            text = flat(item)
            parts.append(f"{label(key)}: {text if text is not None else preview(item)}")
    return preview(" · ".join(decision + parts) or "(empty answer)")
