"""Checking answers against their interrupt's JSON Schema before anything is written."""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from .errors import InvalidAnswerError, WorkflowError


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Draft202012Validator:
    return Draft202012Validator(json.loads(schema_text))


def field_errors(schema: dict[str, Any], value: Any) -> dict[str, list[str]]:
    """Return the schema violations of ``value``, keyed by dotted field path ("" = root)."""
    checker = _validator(json.dumps(schema, sort_keys=True))
    errors: dict[str, list[str]] = {}
    for error in checker.iter_errors(value):
        path = ".".join(str(part) for part in error.absolute_path)
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else ""
            path = f"{path}.{missing}" if path and missing else missing or path
        errors.setdefault(path, []).append(error.message)
    return errors


def check_schema(schema: dict[str, Any], what: str) -> None:
    """Raise ``WorkflowError`` naming ``what`` when ``schema`` is not a valid JSON Schema."""
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as error:
        raise WorkflowError(f"{what} is not a valid JSON Schema: {error.message}") from error


def check_answer(interrupt_id: str, schema: dict[str, Any] | None, value: Any) -> None:
    """Raise ``InvalidAnswerError`` with field errors when ``value`` breaks ``schema``."""
    if schema is None:
        return
    errors = field_errors(schema, value)
    if errors:
        raise InvalidAnswerError(interrupt_id, errors)
