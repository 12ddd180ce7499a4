"""What a run is about and how it ended, in words: its summary ("Ana: 2,300.00 travel"), made
from its input, and its outcome ("approved", "rejected"), made from its output.

A workflow module may say how, next to its workflow::

    label_runs(expense_approval, summary="{employee}: {amount} {category}", outcome=my_outcome)

each a format string (over the input or output object's fields) or a callable of the value
returning text. Without one, or when it fails, a default: the input's first few short fields
(the first text one leading, "Ana: 2,300 travel"); the output's ``outcome`` / ``status`` /
``decision`` / ``result`` text, or "approved"/"rejected" from an ``approved`` flag, or a short
text output itself.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from typing import Any

from wfapp.registry import drawable_workflow

logger = logging.getLogger(__name__)

SUMMARY_MAX = 200  # the Session.summary column's length
SHORT = 40  # a text field longer than this is not a summary's part
PARTS = 3  # fields a default summary shows
OUTCOME_KEYS = ("outcome", "status", "decision", "result", "verdict")

Labeller = str | Callable[[Any], Any] | None


@dataclass(frozen=True, slots=True)
class Labels:
    summary: Labeller = None
    outcome: Labeller = None


_LABELS: dict[str, Labels] = {}


def label_runs(workflow: Any, *, summary: Labeller = None, outcome: Labeller = None) -> None:
    """Say how runs of ``workflow`` (an ``engine.Workflow`` or its name) are summarised and how
    their outcome reads; every version of the workflow shares them."""
    name = workflow if isinstance(workflow, str) else workflow.name
    _LABELS[name] = Labels(summary, outcome)


def _labels(workflow: str, version: str | None) -> Labels:
    drawable_workflow(workflow, version)  # imports the workflow's module, which declares them
    return _LABELS.get(workflow, Labels())


def _apply(labeller: Labeller, value: Any) -> str | None:
    if labeller is None:
        return None
    try:
        if isinstance(labeller, str):
            made: Any = (
                labeller.format_map({k: _as_number(v) for k, v in value.items()})
                if isinstance(value, dict)
                else labeller.format(_as_number(value))
            )
        else:
            made = labeller(value)
    except Exception:  # a workflow's labeller never breaks a page: the default is used
        logger.warning("A run label of %r failed; the default is used.", labeller, exc_info=True)
        return None
    return None if made is None else " ".join(str(made).split())


def _as_number(value: Any) -> Any:
    """A number written as text (a decimal kept exact) as a Decimal, so ``{amount:,.2f}`` works."""
    if isinstance(value, str):
        try:
            number = Decimal(value)
        except InvalidOperation:
            return value
        return number if number.is_finite() else value
    return value


def number_text(value: Any) -> str | None:
    """A number in words people read: grouped thousands, two decimals when it has a fraction."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return f"{value:,}"
    try:
        number = Decimal(str(value)) if isinstance(value, float | str) else None
    except InvalidOperation:
        return None
    if number is None or not number.is_finite():
        return None
    if number == number.to_integral_value():
        return f"{int(number):,}"
    return f"{number:,.2f}"


def _numeric(schema: Any) -> bool:
    """Whether a property's schema says it is a number (among its choices)."""
    if not isinstance(schema, dict):
        return False
    if schema.get("type") in ("number", "integer"):
        return True
    return any(_numeric(choice) for choice in schema.get("anyOf", []) + schema.get("oneOf", []))


def default_summary(value: Any, schema: Any = None) -> str:
    """The input's first few short fields, its first text one leading: "Ana: 2,300 travel"."""
    if isinstance(value, str):
        return value
    if not isinstance(value, dict):
        return number_text(value) or ""
    fields = (schema or {}).get("properties") if isinstance(schema, dict) else None
    fields = fields if isinstance(fields, dict) else {}
    order = [key for key in fields if key in value] + [key for key in value if key not in fields]
    head, rest = "", []
    for key in order:
        item = value[key]
        if isinstance(item, int | float) or (isinstance(item, str) and _numeric(fields.get(key))):
            text = number_text(item)
        elif isinstance(item, str) and 0 < len(item.strip()) <= SHORT:
            text = item.strip()
        else:
            text = None
        if not text:
            continue
        if not head and not text[0].isdigit():
            head = text
        else:
            rest.append(text)
        if len(rest) + bool(head) >= PARTS:
            break
    if head and rest:
        return f"{head}: {' '.join(rest)}"
    return head or " ".join(rest)


def default_outcome(output: Any) -> str | None:
    """How a completed run ended, read from its output, or None (it says only "completed")."""
    if isinstance(output, dict):
        for key in OUTCOME_KEYS:
            said = output.get(key)
            if isinstance(said, str) and 0 < len(said) <= SHORT:
                return said
        if isinstance(output.get("approved"), bool):
            return "approved" if output["approved"] else "rejected"
        return None
    if isinstance(output, str) and 0 < len(output) <= SHORT:
        return output
    return None


def summary_of(workflow: str, version: str | None, node_input: Any) -> str:
    """A new run's summary (at most ``SUMMARY_MAX`` characters)."""
    made = _apply(_labels(workflow, version).summary, node_input)
    if made is None:
        found = drawable_workflow(workflow, version)
        made = default_summary(node_input, getattr(found, "input_json_schema", None))
    return made if len(made) <= SUMMARY_MAX else made[: SUMMARY_MAX - 1] + "…"


def outcome_of(workflow: str, version: str | None, status: str, output: Any) -> str | None:
    """How a completed run ended ("approved"), or None for any other run or a plain ending."""
    if status != "completed":
        return None
    made = _apply(_labels(workflow, version).outcome, output)
    return (made or None) if made is not None else default_outcome(output)
