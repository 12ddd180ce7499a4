"""``state_schema``: the session state keys a workflow or node declares, and their types.

As in ADK, every state write (``ctx.state[key] = value``, ``Event(state={...})``) is checked
against the schema in force, the node's own or else its enclosing workflow's; a key with a
``:`` (the ``app:``, ``user:`` and ``temp:`` scopes) is not checked. A function node's
parameters read from state must be declared in its workflow's schema, checked when the
workflow is built.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from .errors import ConfigurationError, StateSchemaError


@lru_cache(maxsize=256)
def _adapter(schema: type[BaseModel], key: str) -> TypeAdapter[Any]:
    return TypeAdapter(schema.model_fields[key].rebuild_annotation())


def check_state_entry(schema: type[BaseModel], key: str, value: Any) -> None:
    """Refuse a write of ``value`` to ``key`` that ``schema`` does not allow."""
    if ":" in key:
        return
    fields = schema.model_fields
    if key not in fields:
        raise StateSchemaError(
            f"State key '{key}' is not declared in state schema '{schema.__name__}'. "
            f"Declared fields: {sorted(fields)}"
        )
    try:
        _adapter(schema, key).validate_python(value)
    except ValidationError as error:
        raise StateSchemaError(
            f"State value for '{key}' does not match {fields[key].rebuild_annotation()} "
            f"in '{schema.__name__}': {error.errors()[0]['msg']}"
        ) from None


def check_state_delta(schema: type[BaseModel] | None, delta: dict[str, Any]) -> None:
    """``check_state_entry`` for each entry of an ``Event(state=...)``."""
    if schema is not None:
        for key, value in delta.items():
            check_state_entry(schema, key, value)


def check_state_parameters(schema: type[BaseModel], node_name: str, names: Iterable[str]) -> None:
    """Refuse, at build time, a function parameter read from state that ``schema`` lacks."""
    fields = schema.model_fields
    for name in names:
        if ":" not in name and name not in fields:
            raise ConfigurationError(
                f"Node '{node_name}': parameter '{name}' is read from state but is not declared in "
                f"state schema '{schema.__name__}'. Declared fields: {sorted(fields)}"
            )
