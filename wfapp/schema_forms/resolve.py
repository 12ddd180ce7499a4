"""Resolve the JSON Schema shapes pydantic produces into one plain sub-schema per field.

`$ref`/`$defs`, single-element `allOf`, `anyOf`/`oneOf` with `null` (Optional), `type: [X, "null"]`
and pydantic's `Decimal` (`anyOf` number | string) each reduce to one schema plus flags, so the
widget builder only ever looks at a plain `type`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Keywords that describe a field rather than its value: an outer schema's copy wins over the
# referenced one, so `{"$ref": ..., "description": "..."}` keeps its own description.
_ANNOTATIONS = ("title", "description", "default", "examples", "x-widget", "readOnly")


class UnresolvableSchema(Exception):
    """Raised for a `$ref` the form cannot follow (remote, unknown, or recursive)."""


@dataclass
class Resolved:
    """A sub-schema reduced to one shape, with what was learnt on the way."""

    schema: dict[str, Any]
    nullable: bool = False
    decimal: bool = False
    refs: tuple[str, ...] = field(default_factory=tuple)


def _pointer(root: dict[str, Any], ref: str) -> dict[str, Any]:
    if not ref.startswith("#"):
        raise UnresolvableSchema(f"remote reference {ref!r}")
    node: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if not isinstance(node, dict) or part not in node:
            raise UnresolvableSchema(f"unknown reference {ref!r}")
        node = node[part]
    if not isinstance(node, dict):
        raise UnresolvableSchema(f"reference {ref!r} is not a schema")
    return node


def _merge(outer: dict[str, Any], inner: dict[str, Any], drop: str) -> dict[str, Any]:
    merged = dict(inner)
    for key, value in outer.items():
        if key != drop:
            merged[key] = value
    return merged


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and (schema.get("type") == "null" or schema.get("const", 0) is None)


def _is_decimal_pair(branches: list[dict[str, Any]]) -> bool:
    types = sorted(str(b.get("type")) for b in branches)
    if types != ["number", "string"]:
        return False
    text = next(b for b in branches if b.get("type") == "string")
    return not ({"enum", "format", "const"} & text.keys())


def _try_resolve(branch: Any, root: dict[str, Any], stack: tuple[str, ...]) -> Any:
    if not isinstance(branch, dict):
        return branch
    try:
        return resolve(branch, root, stack).schema
    except UnresolvableSchema:
        return branch


def resolve(schema: Any, root: dict[str, Any], stack: tuple[str, ...] = ()) -> Resolved:
    """Follow references and unwrap Optional until one plain schema remains."""
    if schema is True or schema is None:
        return Resolved({}, refs=stack)
    if not isinstance(schema, dict):
        raise UnresolvableSchema("schema is not an object")
    nullable = False
    for _ in range(32):  # bounded: a chain of references longer than this is not a form
        if "$ref" in schema:
            ref = schema["$ref"]
            if ref in stack:
                raise UnresolvableSchema(f"recursive reference {ref!r}")
            stack = (*stack, ref)
            schema = _merge(schema, _pointer(root, ref), drop="$ref")
            continue
        all_of = schema.get("allOf")
        if isinstance(all_of, list) and len(all_of) == 1 and isinstance(all_of[0], dict):
            schema = _merge(schema, all_of[0], drop="allOf")
            continue
        for key in ("anyOf", "oneOf"):
            branches = schema.get(key)
            if not isinstance(branches, list):
                continue
            rest = [b for b in branches if not _is_null(b)]
            if len(rest) < len(branches):
                nullable = True
            rest = [_try_resolve(b, root, stack) for b in rest]
            if len(rest) == 1 and isinstance(rest[0], dict):
                schema = _merge(schema, rest[0], drop=key)
                break
            if len(rest) == 2 and _is_decimal_pair(rest):
                number = next(b for b in rest if b.get("type") == "number")
                merged = _merge(schema, number, drop=key)
                return Resolved(merged, nullable=nullable, decimal=True, refs=stack)
            if len(rest) < len(branches):
                schema = {**{k: v for k, v in schema.items() if k != key}, key: rest}
            return Resolved(schema, nullable=nullable, refs=stack)
        else:
            break
    kind = schema.get("type")
    if isinstance(kind, list):
        rest = [t for t in kind if t != "null"]
        if len(rest) < len(kind):
            nullable = True
        if len(rest) == 1:
            schema = {**schema, "type": rest[0]}
    return Resolved(schema, nullable=nullable, refs=stack)
