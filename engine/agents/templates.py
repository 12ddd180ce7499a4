"""Filling ``{key}`` placeholders of an instruction from session state and the node's input."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

from .errors import TemplateKeyError

# ``{name}`` or ``{name?}`` (optional); anything else in braces (JSON examples) is left alone.
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(\??)\}")


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
    """Replace each ``{key}`` with the node input's value, else the state's; ``{key?}`` may be missing."""
    offered = input_values(node_input)

    def value(match: re.Match[str]) -> str:
        key, optional = match.group(1), match.group(2)
        if key in offered:
            return as_text(offered[key])
        if key in state:
            return as_text(state[key])
        if optional:
            return ""
        raise TemplateKeyError(
            f"Agent '{agent}': its instruction uses {{{key}}}, but '{key}' is neither in the session "
            f"state nor in the node's input (write it to state first, or use {{{key}?}} if it may be missing)"
        )

    return _PLACEHOLDER.sub(value, template)
