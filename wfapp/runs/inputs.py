"""Checking what callers send: JSON text within the limits, inputs against a JSON Schema."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from engine import limits
from engine.patterns import Validator
from wfapp.errors import MalformedJSONError, PayloadTooLargeError


def apply_limits() -> None:
    """Give the engine the limits of the settings (``WFAPP_MAX_JSON_DEPTH``, ``WFAPP_MAX_ANSWER_BYTES``)."""
    try:
        limits.configure(
            max_depth=int(settings.WFAPP_MAX_JSON_DEPTH), max_input_bytes=int(settings.WFAPP_MAX_ANSWER_BYTES)
        )
    except ValueError as error:
        raise ImproperlyConfigured(f"WFAPP_MAX_JSON_DEPTH / WFAPP_MAX_ANSWER_BYTES: {error}") from None


def limits_changed(*, setting: str, **kwargs: Any) -> None:
    if setting in ("WFAPP_MAX_JSON_DEPTH", "WFAPP_MAX_ANSWER_BYTES"):
        apply_limits()


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON: use a finite number or null")


def parse_json(raw: str | bytes, what: str = "the answer", limit: int | None = None) -> Any:
    """Parse JSON text, refusing it *before* parsing when it is over the size limit.

    What parses must also be storable: nested within the depth limit, with no NUL character
    (``engine.errors.ValueLimitError`` otherwise).
    """
    limit = settings.WFAPP_MAX_ANSWER_BYTES if limit is None else limit
    size = len(raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw)
    name = what[:1].upper() + what[1:]
    if size > limit:
        raise PayloadTooLargeError(name, size, limit)
    try:
        value = json.loads(raw, parse_constant=_no_constant)
    except RecursionError:
        raise limits.too_deep(name, caller=True) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedJSONError(what, str(exc)) from None
    limits.check_input(value, name)
    return value


def schema_errors(schema: dict[str, Any] | None, value: Any) -> dict[str, list[str]]:
    """The violations of ``schema`` by ``value``, keyed by dotted field path ("" = the whole value)."""
    if schema is None:
        return {}
    validator = Validator(schema)  # its patterns on RE2, in linear time
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
