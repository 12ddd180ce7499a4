"""Filling ``{key}`` placeholders of an instruction from session state and the node's input."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .errors import TemplateKeyError

# ``{name}``, ``{name?}`` (optional), ``{app:name}`` / ``{user:name}`` / ``{temp:name}`` (state keys
# with ADK's prefixes), ``{Model.field}`` (a field of the pydantic input, by its class name) and
# ``{name.field}`` (a field of a value); spaces inside the braces are allowed, as in ADK. Anything
# else in braces (JSON examples, ``{{`` of other template languages) is left alone.
_PLACEHOLDER = re.compile(
    r"(?<![{$\\])\{\s*((?:app:|user:|temp:)?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)\s*(\??)\s*\}(?!\})"
)
_MISSING = object()


def input_values(node_input: Any) -> Mapping[str, Any]:
    """The keys a node's input offers to templates: a dict's keys or a model's fields."""
    if isinstance(node_input, BaseModel):
        return node_input.model_dump(mode="json")
    if isinstance(node_input, Mapping):
        return node_input
    return {}


def as_text(value: Any) -> str:
    """A value as the model reads it: strings as they are, anything else as JSON.

    Dict keys are sorted: a value read back from the log (PostgreSQL's jsonb reorders keys)
    must give the model the same text as the live one, or replay would see another request.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, BaseModel):
        return value.model_dump_json()
    return json.dumps(value, default=str, ensure_ascii=False, sort_keys=True)


def fill(template: str, agent: str, state: Mapping[str, Any], node_input: Any) -> str:
    """Fill each placeholder from the node's input, else the state; ``{key?}`` may be missing.

    A placeholder that cannot be filled fails the node naming it: it never reaches the model.
    """
    if "{" not in template:
        return template
    offered = input_values(node_input)

    def value(match: re.Match[str]) -> str:
        key, optional = match.group(1), match.group(2)
        found = _lookup(key, offered, state, node_input)
        if found is not _MISSING:
            return "" if found is None else as_text(found)
        if optional:
            return ""
        if key.startswith("artifact."):
            raise TemplateKeyError(
                f"Agent '{agent}': its instruction uses {{{key}}}, but this engine keeps no artifacts; "
                "write the content to the session state and use {key} instead"
            )
        raise TemplateKeyError(
            f"Agent '{agent}': its instruction uses {{{key}}}, but '{key}' is neither in the session "
            f"state nor in the node's input (write it to state first, or use {{{key}?}} if it may be missing)"
        )

    return _PLACEHOLDER.sub(value, template)


def _lookup(key: str, offered: Mapping[str, Any], state: Mapping[str, Any], node_input: Any) -> Any:
    """A placeholder's value, or ``_MISSING``."""
    if key in offered:
        return offered[key]
    if key in state:
        return state[key]
    head, _, rest = key.partition(".")
    if not rest:
        return _MISSING
    if isinstance(node_input, BaseModel) and head == type(node_input).__name__:
        return _field(node_input.model_dump(mode="json"), rest)  # {CityTime.time_info}
    if head in offered:
        return _field(offered[head], rest)
    if head in state:
        return _field(state[head], rest)
    return _MISSING


def _field(value: Any, path: str) -> Any:
    for name in path.split("."):
        if isinstance(value, BaseModel):
            value = value.model_dump(mode="json")
        if isinstance(value, Mapping) and name in value:
            value = value[name]
        else:
            return _MISSING
    return value
