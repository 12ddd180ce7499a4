"""What JSON a schema wants, for people: in words, and as a skeleton value to fill in.

The JSON fields of a schema form (the fallback for shapes no widget renders) show both: the
words as their hint ("a list of objects with sku (text), price (number)"), the skeleton as
their placeholder.
"""

from __future__ import annotations

import json
from typing import Any

from wfapp.schema_forms.resolve import UnresolvableSchema, resolve

# Words a key spells in lower case that people write in capitals.
ACRONYMS = frozenset(
    "api bic cpu csv eta eur gbp html http iban id ip json pdf sku sla ui uri url usd uuid vat".split()
)


def humanize(key: str) -> str:
    """A key as a label: "order_id" -> "Order ID", "sku" -> "SKU" (other words keep their case)."""
    words = key.replace("_", " ").replace("-", " ").split()
    if not words:
        return key
    words = [w.upper() if w.lower() in ACRONYMS else w for w in words]
    return " ".join([words[0][:1].upper() + words[0][1:], *words[1:]])


def field_label(key: str, title: Any) -> str:
    """A field's label: its schema `title` when someone wrote it, else the key in words.

    Pydantic titles every field itself ("sku" -> "Sku", "order_id" -> "Order Id"); such a title
    says nothing the key does not, and loses the acronyms, so the key's words are used instead.
    """
    if not isinstance(title, str) or not title.strip():
        return humanize(key)
    generated = key.replace("_", " ").strip().title()
    return humanize(key) if title == generated else title


def example(schema: Any, root: dict[str, Any], depth: int = 0) -> Any:
    """A skeleton value of `schema` to show as a placeholder (None when nothing useful)."""
    if depth > 4 or not isinstance(schema, dict):
        return None
    try:
        s = resolve(schema, root).schema
    except UnresolvableSchema:
        return None
    if "default" in s:
        return s["default"]
    if "const" in s:
        return s["const"]
    if s.get("enum"):
        return s["enum"][0]
    kind = s.get("type")
    if kind == "object":
        props = s.get("properties") or {}
        return {key: example(sub, root, depth + 1) for key, sub in props.items()} if props else None
    if kind == "array":
        item = example(s.get("items"), root, depth + 1)
        return [item] if item is not None else []
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(str(kind))


def describe(schema: dict[str, Any], root: dict[str, Any], depth: int = 0) -> str:
    """Say in words what JSON a schema wants: "a list of objects with sku (text), price (number)"."""
    try:
        schema = resolve(schema, root).schema
    except UnresolvableSchema:
        return "any JSON value"
    kind = schema.get("type")
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    if kind == "array":
        items = schema.get("items")
        if isinstance(items, dict) and items and depth < 2:
            inner = describe(items, root, depth + 1)
            return "a list of " + ("objects" + inner[9:] if inner.startswith("an object") else inner)
        return "a list"
    if kind == "object":
        props = schema.get("properties")
        if isinstance(props, dict) and props and depth < 2:
            fields = ", ".join(f"{k} ({describe(v, root, depth + 1)})" for k, v in props.items())
            return f"an object with {fields}"
        return "an object"
    if isinstance(kind, str):
        return {"string": "text", "integer": "whole number", "boolean": "true or false"}.get(kind, kind)
    if "oneOf" in schema or "anyOf" in schema:
        return "one of several shapes"
    return "any JSON value"
