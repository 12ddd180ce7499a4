"""Values as a person reads them: an answer as one line, a payload or output as labelled rows."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from django.utils.safestring import SafeString

from wfapp.schema_forms.words import humanize
from wfapp.web import markdown_text

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
    markdown: bool = False  # a long text written in Markdown: shown formatted (``html``)
    number: bool = False  # a number (or a decimal kept as text): the page writes it the viewer's way

    @property
    def html(self) -> SafeString:
        """A Markdown text as sanitised HTML (``markdown_text``)."""
        return markdown_text.render(self.text)


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
    sentence = quorum_summary(value)
    if sentence is not None:
        return Row(name, sentence, False)
    found = table(name, value)
    if found is not None:
        return found
    if isinstance(value, str) and ("\n" in value or len(value) > LONG_TEXT):
        return Row(name, value, True, markdown=markdown_text.looks_like_markdown(value))
    text = flat(value)
    if text is None:
        return Row(name, pretty(value), True)
    return Row(name, text, False, number=is_number(value))


_NUMBER = re.compile(r"-?(0|[1-9][0-9]{0,14})(\.[0-9]{1,6})?")


def is_number(value: Any) -> bool:
    """Whether a value is a number people read (a JSON number, or a decimal written as text
    such as "2300.50"; not "02134", which is a code), small enough to format exactly."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int | float):
        return _NUMBER.fullmatch(str(value)) is not None
    return isinstance(value, str) and _NUMBER.fullmatch(value) is not None


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
    sentence = quorum_summary(value)
    if sentence is not None:
        return preview(sentence)
    text = flat(value)
    if text is not None:
        return preview(text)
    if isinstance(value, dict):
        return preview(" · ".join(f"{label(k)}: {_words(v)}" for k, v in value.items()))
    return preview(", ".join(_words(v) for v in value) if isinstance(value, list) else str(value))


def _words(value: Any) -> str:
    """A part of a value in words: itself when flat, a quorum's answers as a sentence, else counted."""
    return flat(value) or quorum_summary(value) or count(value)


def _decided(value: dict[str, Any]) -> tuple[list[str], list[str]]:
    """An answer's decision ("Approved", "Rejected") and its other filled-in fields, in words."""
    decision: list[str] = []
    parts: list[str] = []
    for key, item in value.items():
        if key in DECISION_KEYS and isinstance(item, bool):
            decision.append("Approved" if item else "Rejected")
        elif item not in ("", None, [], {}):
            text = flat(item)
            parts.append(f"{label(key)}: {text if text is not None else preview(item)}")
    return decision, parts


def answer_summary(value: Any) -> str:
    """An answer in one line: "Approved · Comment: fine", with empty optional fields left out;
    a quorum's answers as a sentence ("Approved by fred and fiona", ``quorum_summary``)."""
    sentence = quorum_summary(value)
    if sentence is not None:
        return preview(sentence)
    if not isinstance(value, dict):
        return preview(scalar(value) if isinstance(value, bool) or value is None else value)
    decision, parts = _decided(value)
    return preview(" · ".join(decision + parts) or "(empty answer)")


def names(people: list[str]) -> str:
    """``["fred", "fiona", "dora"]`` as "fred, fiona and dora"."""
    return people[0] if len(people) == 1 else f"{', '.join(people[:-1])} and {people[-1]}"


def quorum_summary(value: Any) -> str | None:
    """A quorum's answers (``[{"actor": ..., "answer": ...}]``, in order) as a sentence:
    "Approved by fred and fiona", "Approved by fred; rejected by fiona (fiona — Comment: too
    much)"; None for any other value."""
    if not isinstance(value, list) or not value:
        return None
    if not all(isinstance(given, dict) and set(given) == {"actor", "answer"} for given in value):
        return None
    decided: dict[str, list[str]] = {}  # decision -> who, in the order first given
    remarks: list[str] = []
    for given in value:
        actor, answer = str(given["actor"]), given["answer"]
        decision, parts = _decided(answer) if isinstance(answer, dict) else ([], [answer_summary(answer)])
        decided.setdefault(decision[0] if decision else "Answered", []).append(actor)
        if parts:
            remarks.append(f"{actor} — {' · '.join(parts)}")
    said = "; ".join(
        f"{word if n == 0 else word.lower()} by {names(people)}"
        for n, (word, people) in enumerate(decided.items())
    )
    return f"{said} ({'; '.join(remarks)})" if remarks else said
