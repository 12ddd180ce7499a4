"""Validate a value against its JSON Schema (Draft 2020-12) and word the errors for people.

Errors are keyed by field path (`address.city`, `""` for the whole form); an error deeper than
any widget (inside a JSON field) is attached to that widget and says where inside it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from jsonschema.exceptions import ValidationError, best_match

from engine.patterns import Validator
from wfapp.schema_forms.widgets import Widget, path_key

FORMAT_NAMES = {
    "email": "an email address",
    "date": "a date (YYYY-MM-DD)",
    "date-time": "a date and time (e.g. 2026-01-31T09:30:00Z)",
    "time": "a time",
    "uri": "a URL",
    "uuid": "a UUID",
    "ipv4": "an IPv4 address",
}


def _num(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# Constraints whose message only fills in the schema's limit.
_LIMIT_MESSAGES = {
    "maxLength": "Enter at most {} characters.",
    "pattern": "Enter a value in the expected format ({}).",
    "minimum": "Enter a value of at least {}.",
    "maximum": "Enter a value of at most {}.",
    "exclusiveMinimum": "Enter a value greater than {}.",
    "exclusiveMaximum": "Enter a value less than {}.",
    "multipleOf": "Enter a multiple of {}.",
}
_TYPE_NAMES = {
    "integer": "a whole number",
    "number": "a number",
    "string": "text",
    "boolean": "true or false",
    "object": "an object",
    "array": "a list",
}


def _message(error: ValidationError, widget: Widget | None) -> str:
    v, limit = error.validator, error.validator_value
    if v in _LIMIT_MESSAGES:
        return _LIMIT_MESSAGES[str(v)].format(_num(limit))
    if v == "required":
        if widget is not None and widget.kind == "decision":
            return "Choose Approve or Reject."
        return "This field is required."
    if v == "minLength":
        return "This field is required." if limit == 1 else f"Enter at least {limit} characters."
    if v == "format":
        return f"Enter {FORMAT_NAMES.get(str(limit), f'a valid {limit}')}."
    if v in ("enum", "const"):
        return "Choose one of the options."
    if v in ("minItems", "maxItems"):
        return f"Give at {'least' if v == 'minItems' else 'most'} {limit} item{'s' if limit != 1 else ''}."
    if v == "uniqueItems":
        return "Give each item only once."
    if v == "type":
        kinds = limit if isinstance(limit, list) else [limit]
        return "Enter " + " or ".join(_TYPE_NAMES.get(str(k), str(k)) for k in kinds) + "."
    return error.message


def _leaf_errors(errors: Iterable[ValidationError], root: Widget) -> Iterable[ValidationError]:
    """Replace `anyOf`/`oneOf` failures on form widgets with their most relevant branch error."""
    for error in errors:
        target = find_widget(root, _error_paths(error)[0])
        if error.validator in ("anyOf", "oneOf") and error.context and target.kind != "json":
            # A branch of the wrong type says least: prefer the branch that failed a constraint.
            relevant = [e for e in error.context if e.validator != "type"] or error.context
            yield from _leaf_errors([best_match(relevant)], root)
        else:
            yield error


def _error_paths(error: ValidationError) -> list[list[str | int]]:
    """Where the error belongs; a "required" error names every missing key, each its own field."""
    path = list(error.absolute_path)
    required = error.validator_value
    if error.validator == "required" and isinstance(error.instance, dict) and isinstance(required, list):
        missing = [k for k in required if k not in error.instance]
        if missing:
            return [[*path, key] for key in missing]
    return [path]


def find_widget(root: Widget, path: list[str | int]) -> Widget:
    """Return the deepest widget whose path is a prefix of `path`."""
    node = root
    for part in path:
        nxt = next((c for c in node.children if c.path[-1] == part), None)
        if nxt is None:
            break
        node = nxt
    return node


def validate(schema: dict[str, Any], value: Any, root: Widget) -> dict[str, list[str]]:
    """Return people-worded errors of `value` against `schema`, keyed by widget path."""
    validator = Validator(schema, format_checker=Validator.FORMAT_CHECKER)  # patterns on RE2
    found: dict[str, list[str]] = {}
    for error in _leaf_errors(validator.iter_errors(value), root):
        for path in _error_paths(error):
            widget = find_widget(root, path)
            message = _message(error, widget)
            inner = path[len(widget.path) :]
            if inner and widget.kind == "json":
                message = f"At {path_key(inner)}: {message}"
            elif inner and widget.kind == "lines" and isinstance(inner[0], int):
                message = f"Line {inner[0] + 1}: {message}"
            bucket = found.setdefault(widget.key, [])
            if message not in bucket:
                bucket.append(message)
    return found
