"""Checking what callers send: JSON text under a size limit, inputs against a JSON Schema."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from jsonschema.validators import validator_for

from .errors import MalformedJSONError, PayloadTooLargeError


def parse_json(raw: str | bytes, what: str = "the answer", limit: int | None = None) -> Any:
    """Parse JSON text, refusing it *before* parsing when it is over the size limit."""
    limit = settings.WFAPP_MAX_ANSWER_BYTES if limit is None else limit
    size = len(raw.encode() if isinstance(raw, str) else raw)
    if size > limit:
        raise PayloadTooLargeError(what[:1].upper() + what[1:], size, limit)
    try:
        return json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedJSONError(what, str(exc)) from None


def schema_errors(schema: dict[str, Any] | None, value: Any) -> dict[str, list[str]]:
    """The violations of ``schema`` by ``value``, keyed by dotted field path ("" = the whole value)."""
    if schema is None:
        return {}
    validator = validator_for(schema)(schema)
    errors: dict[str, list[str]] = {}
    for error in sorted(validator.iter_errors(value), key=lambda e: list(map(str, e.absolute_path))):
        path = ".".join(str(part) for part in error.absolute_path)
        if error.validator == "required" and isinstance(error.instance, dict):
            required = error.validator_value if isinstance(error.validator_value, list) else []
            for name in required:
                if name not in error.instance:
                    field = f"{path}.{name}" if path else str(name)
                    # jsonschema reports each missing key once, each time with the whole list.
                    errors[field] = ["This field is required."]
            continue
        errors.setdefault(path, []).append(error.message)
    return errors
