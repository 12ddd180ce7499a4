"""Forms generated from JSON Schema: interrupt answers and workflow start forms.

`SchemaForm(schema)` renders the schema's widgets (see `widgets`) with their defaults;
`SchemaForm(schema, data=request.POST)` reads the POST back into a JSON value, validates it with
`jsonschema` (Draft 2020-12) and keeps what was typed, so a 422 page shows the same input with
field errors. `bulk_decision(schema)` says whether many interrupts of that schema can be approved
or rejected at once, and builds the answer.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from engine.patterns import Validator
from wfapp.schema_forms.errors import validate
from wfapp.schema_forms.resolve import UnresolvableSchema, resolve
from wfapp.schema_forms.rows import RowEdit, apply_edit
from wfapp.schema_forms.values import FormData, keep_decimal_text, keep_typed, nearest_key, parse, show_value
from wfapp.schema_forms.widgets import MISSING, Widget, build_widgets, path_key

__all__ = ["MISSING", "BulkDecision", "SchemaForm", "Widget", "bulk_decision", "path_key", "reason_field"]

REASON_FIELDS = ("reason", "comment", "feedback", "note")  # an answer's text field for a rejection's reason
REASON_NAME = "_reason"  # the form's own reason field, when the answer has none


class SchemaForm:
    """A form for one JSON Schema; bound when given the submitted `data`."""

    def __init__(
        self,
        schema: dict[str, Any] | None,
        *,
        data: FormData | None = None,
        initial: Any = MISSING,
        prefix: str = "f",
        id_prefix: str = "",
        root_label: str = "Answer",
    ) -> None:
        self.schema = schema
        self.edit: RowEdit | None = None  # a row added or removed: show the form again, send nothing
        if data is not None:
            data, self.edit = apply_edit(data)
        self.data = data
        self.prefix = prefix
        self.root = build_widgets(schema, prefix=prefix, id_prefix=id_prefix, root_label=root_label)
        self._errors: dict[str, list[str]] | None = None
        self._value: Any = MISSING
        # The one reason field of an approve/reject question whose answer has no text field for
        # it: what was typed, and its error (shown on that field, not on top of the form).
        self.reason = str(data.get(REASON_NAME, "")) if data is not None and hasattr(data, "get") else ""
        self.reason_error = ""
        if data is None:
            show_value(self.root, initial)
        else:
            keep_typed(self.root, data)
            self._focus_after_edit()

    def _focus_after_edit(self) -> None:
        """Put the focus where the person continues: the new row's first field, or Add after a removal."""
        edit = self.edit
        if edit is None or edit.index is None:
            return
        rows = next((w for w in self.root.walk() if w.kind == "rows" and w.name == edit.name), None)
        if rows is None:
            return
        if edit.verb == "remove" or edit.index >= len(rows.children):
            rows.focus_add = True
            return
        first = next((w for w in rows.children[edit.index].walk() if w.kind in _FOCUSABLE), None)
        if first is not None:
            first.attrs["autofocus"] = "autofocus"

    @property
    def editing(self) -> bool:
        """Whether the submit only added or removed a row (nothing to validate or send)."""
        return self.edit is not None

    @property
    def has_rows(self) -> bool:
        return any(w.kind == "rows" for w in self.root.walk())

    @property
    def is_bound(self) -> bool:
        return self.data is not None

    @property
    def fields(self) -> list[Widget]:
        """The widgets to lay out in order; the decision (if any) is rendered as the buttons."""
        if self.root.kind == "fieldset" and not self.root.path:
            return [c for c in self.root.children if c.kind != "decision"]
        return [] if self.root.kind == "decision" else [self.root]

    @property
    def decision(self) -> Widget | None:
        """The boolean that the Approve / Reject buttons submit, when the form has one."""
        if self.root.kind == "decision":
            return self.root
        return next((c for c in self.root.children if c.kind == "decision"), None)

    def widgets(self) -> Iterator[Widget]:
        return self.root.walk()

    @property
    def reason_slot(self) -> bool:
        """Whether the form shows its own reason field next to Approve / Reject: an approve/reject
        question whose answer has no text field for a rejection's reason (that field is it otherwise)."""
        return (
            self.decision is not None
            and bulk_decision(self.schema) is not None
            and not reason_field(self.schema)
        )

    def refuse_reason(self, message: str) -> None:
        """Show a refused rejection reason on the field that holds it."""
        field = reason_field(self.schema)
        if field is None:
            self.reason_error = message
        else:
            self.add_errors({nearest_key(self.root, (field,)): [message]})

    @property
    def errors(self) -> dict[str, list[str]]:
        if self._errors is None:
            self._clean()
        assert self._errors is not None
        return self._errors

    @property
    def non_field_errors(self) -> list[str]:
        """Errors about the whole answer that belong to no single control."""
        if self.root.kind != "fieldset":
            return []
        return self.errors.get("", [])

    @property
    def fields_marked(self) -> bool:
        """Whether a field (not only the missing Approve / Reject) carries an error to correct."""
        decision = self.decision
        return any(decision is None or key != decision.key for key in self.errors)

    def is_valid(self) -> bool:
        return self.is_bound and self.edit is None and not self.errors

    def add_errors(self, errors: Mapping[str, list[str]]) -> None:
        """Show errors found after the form's own checks (by the service) on their fields."""
        for key, messages in errors.items():
            self.errors.setdefault(key, []).extend(messages)
        for widget in self.widgets():
            widget.errors = self.errors.get(widget.key, [])

    def add_error_at(self, path: tuple[str | int, ...], message: str) -> None:
        """``add_errors`` for one message about the value at ``path`` (the nearest field shows it)."""
        self.add_errors({nearest_key(self.root, path): [message]})

    @property
    def value(self) -> Any:
        """The validated JSON value; only meaningful when `is_valid()`."""
        if self._errors is None:
            self._clean()
        return self._value

    def _clean(self) -> None:
        if self.data is None or self.edit is not None:
            self._errors = {}
            return
        errors: dict[str, list[str]] = {}
        value = parse(self.root, self.data, errors)
        unreadable = set(errors)
        if value is MISSING and not unreadable:
            unreadable.add(self.root.key)
            errors[self.root.key] = [
                "Choose Approve or Reject." if self.root.kind == "decision" else "This field is required."
            ]
        if self.schema is not None and value is not MISSING:
            for key, messages in validate(self.schema, value, self.root).items():
                # A value that could not be read has already said so; its "required" is noise.
                if key not in unreadable:
                    errors.setdefault(key, []).extend(messages)
        if not errors and any(w.decimal for w in self.root.walk()):
            value = keep_decimal_text(self.root, value, self.data)
            for key, messages in validate(self.schema or {}, value, self.root).items():
                errors.setdefault(key, []).extend(messages)  # the text's own rules (a pattern)
        self._value, self._errors = value, errors
        for widget in self.root.walk():
            widget.errors = errors.get(widget.key, [])


_FOCUSABLE = ("text", "number", "textarea", "json", "lines")


@dataclass(frozen=True)
class BulkDecision:
    """How to answer an interrupt with just Approve or Reject."""

    field: str | None  # the required field holding the decision; None for a bare boolean
    approve_value: Any
    reject_value: Any
    defaults: dict[str, Any]

    def answer(self, approve: bool) -> Any:
        decision = self.approve_value if approve else self.reject_value
        if self.field is None:
            return decision
        return {**self.defaults, self.field: decision}


APPROVE_WORDS = ("approve", "approved", "accept", "accepted", "yes")
REJECT_WORDS = ("reject", "rejected", "deny", "denied", "decline", "declined", "no")


def _decision_values(schema: dict[str, Any]) -> tuple[Any, Any] | None:
    if schema.get("type") == "boolean" and "enum" not in schema and "const" not in schema:
        return True, False
    values = schema.get("enum")
    if isinstance(values, list) and all(isinstance(v, str) for v in values):
        approve = next((v for v in values if v.lower() in APPROVE_WORDS), None)
        reject = next((v for v in values if v.lower() in REJECT_WORDS), None)
        if approve is not None and reject is not None:
            return approve, reject
    return None


def reason_field(schema: Any) -> str | None:
    """The answer's text field that holds a rejection's reason, if the schema has one."""
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if not isinstance(properties, dict):
        return None
    for name in REASON_FIELDS:
        prop = properties.get(name)
        if isinstance(prop, dict) and prop.get("type") == "string":
            return name
    return None


def bulk_decision(schema: dict[str, Any] | None) -> BulkDecision | None:
    """Return how to bulk-answer `schema`, or None when a person must fill the form.

    Bulk answers are offered for an object whose only required field is a boolean or an
    approve/reject enum (the other fields are left at their defaults), and for a bare boolean.
    Worked out once per schema (an inbox page asks it of every card, most sharing a schema).
    """
    if not isinstance(schema, dict):
        return None
    try:
        text = json.dumps(schema, sort_keys=True)
    except (TypeError, ValueError):  # not JSON: nothing a stored question holds
        return _bulk_decision(schema)
    return _bulk_decision_of(text)


@functools.lru_cache(maxsize=512)
def _bulk_decision_of(text: str) -> BulkDecision | None:
    return _bulk_decision(json.loads(text))


def _bulk_decision(schema: dict[str, Any]) -> BulkDecision | None:
    found: BulkDecision | None
    try:
        root = resolve(schema, schema)
        if root.nullable:
            return None
        bare = _decision_values(root.schema)
        if bare is not None:
            found = BulkDecision(None, bare[0], bare[1], {})
        else:
            found = _object_decision(schema, root.schema)
    except UnresolvableSchema:
        return None
    if found is None:
        return None
    validator = Validator(schema)
    if not all(validator.is_valid(found.answer(a)) for a in (True, False)):
        return None
    return found


def _object_decision(schema: dict[str, Any], root: dict[str, Any]) -> BulkDecision | None:
    props = root.get("properties")
    required = root.get("required") or []
    if root.get("type") != "object" or not isinstance(props, dict) or len(required) != 1:
        return None
    key = required[0]
    if key not in props:
        return None
    field = resolve(props[key], schema)
    values = _decision_values(field.schema) if not field.nullable else None
    if values is None:
        return None
    defaults = {}
    for name, sub in props.items():
        if name != key:
            default = resolve(sub, schema).schema.get("default", MISSING)
            if default is not MISSING:
                defaults[name] = default
    return BulkDecision(key, values[0], values[1], defaults)
