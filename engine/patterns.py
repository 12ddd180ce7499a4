"""JSON Schema validation whose regular expressions run in linear time (RE2), whatever the input.

jsonschema runs ``pattern`` and ``patternProperties`` with Python's ``re``, which backtracks:
a schema's ``^(a+)+$`` against a long answer takes exponential time, a question's schema
comes from workflow code, and the answer from whoever may answer. ``Validator`` is Draft
2020-12 with those keywords (and ``additionalProperties``, which matches names against
``patternProperties``) on Google's RE2 (``google-re2``), whose matching time is linear in the
input. A pattern RE2 cannot run (a backreference, a lookaround) is refused when the schema is
checked (``unsafe_patterns``), as is ``unevaluatedProperties`` beside ``patternProperties``
(jsonschema matches those names with ``re``), so no schema that passed its check backtracks.
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2
from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from jsonschema.validators import extend

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is reported by ``unsafe_patterns``, not on stderr


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> Any:
    return re2.compile(pattern, options=_OPTIONS)


def _search(pattern: str, text: str) -> bool:
    return _compiled(pattern).search(text) is not None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[ValidationError]:
    if validator.is_type(instance, "string") and not _search(pattern, instance):
        shown = instance if len(instance) <= 60 else instance[:57] + "..."
        yield ValidationError(f"{shown!r} does not match {pattern!r}")


def _pattern_properties(
    validator: Any, patterns: dict[str, Any], instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for name, value in instance.items():
            if _search(pattern, name):
                yield from validator.descend(value, subschema, path=name, schema_path=pattern)


def _additional_properties(
    validator: Any, allowed: Any, instance: Any, schema: Any
) -> Iterator[ValidationError]:
    if not validator.is_type(instance, "object"):
        return
    known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = [name for name in instance if name not in known and not any(_search(p, name) for p in patterns)]
    if validator.is_type(allowed, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], allowed, path=extra)
    elif not allowed and extras:
        names = ", ".join(repr(extra) for extra in sorted(extras))
        yield ValidationError(f"Additional properties are not allowed ({names} unexpected)")


Validator = extend(  # type: ignore[no-untyped-call]
    Draft202012Validator,
    {
        "pattern": _pattern,
        "patternProperties": _pattern_properties,
        "additionalProperties": _additional_properties,
    },
)


def _walk(schema: Any) -> Iterator[dict[str, Any]]:
    if isinstance(schema, dict):
        yield schema
        for value in schema.values():
            yield from _walk(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _walk(value)


def unsafe_patterns(schema: Any) -> list[str]:
    """What in ``schema`` cannot be matched in linear time, one sentence each (empty: all can)."""
    problems = []
    for part in _walk(schema):
        patterns = [part["pattern"]] if isinstance(part.get("pattern"), str) else []
        if isinstance(part.get("patternProperties"), dict):
            patterns += list(part["patternProperties"])
            if "unevaluatedProperties" in part:
                problems.append("unevaluatedProperties beside patternProperties is not supported")
        for pattern in patterns:
            try:
                _compiled(pattern)
            except re2.error as error:
                reason = error.args[0].decode() if error.args and isinstance(error.args[0], bytes) else error
                problems.append(f"the pattern {pattern!r} cannot run in linear time ({reason})")
    return problems
