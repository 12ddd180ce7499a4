"""Turning node values into JSON for the log, and back through declared types."""

from __future__ import annotations

import dataclasses
import math
import re
import types
import typing
from collections.abc import Callable
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, TypeAdapter
from pydantic_core import PydanticSerializationError, to_jsonable_python

from .errors import WorkflowError
from .limits import check_input, check_value, too_deep

_SCALARS = (int, bool, type(None))
_SHORT = 1024  # shorter plain values are under every limit by construction


def to_json(value: Any, what: str, *, caller: bool = False) -> Any:
    """Return ``value`` as JSON data the log can read back; fail naming ``what`` otherwise.

    A value that cannot be converted, or breaks a limit of ``engine.limits``, raises
    ``WorkflowError``; with ``caller`` (the start input, an answer) a limit raises
    ``ValueLimitError`` instead, a caller error.
    """
    if is_plain_json(value):
        return value[:] if type(value) is list else value  # the log's own list, not the node's
    check = check_input if caller else check_value
    if isinstance(value, bytes | bytearray | memoryview):
        raise _no_bytes(what)
    try:
        data = to_jsonable_python(value)
    except PydanticSerializationError as error:
        kind = _unknown_type(error) or type(value)
        name = f"{kind.__module__}.{kind.__qualname__}" if isinstance(kind, type) else str(kind)
        raise WorkflowError(
            f"{what} is or holds a {name} object, which cannot be stored in the event log (the log "
            f"keeps JSON, so a resumed run gets back what was recorded). Make {name.rsplit('.', 1)[-1]} "
            "a dataclass or a pydantic model with the same attributes (@dataclass above the class, "
            "its attributes annotated), or return JSON data"
        ) from error
    except UnicodeDecodeError:  # bytes inside a container that are not UTF-8 text
        raise _no_bytes(what) from None
    except ValueError:  # pydantic's "maximum serialization depth exceeded"
        check(value, what)  # says how deep, when the nesting is in plain dicts and lists
        raise too_deep(what, caller=caller) from None
    check(data, what)
    return data


def _unknown_type(error: PydanticSerializationError) -> str | None:
    """The type pydantic names in "Unable to serialize unknown type: <class 'x.Y'>"."""
    found = re.search(r"unknown type: <class '([^']+)'>", str(error))
    return found.group(1) if found else None


def _no_bytes(what: str) -> WorkflowError:
    return WorkflowError(
        f"{what} holds bytes, which cannot be stored in the event log (it keeps JSON); "
        "encode them as text first (base64, say)"
    )


def fresh(value: Any) -> Any:
    """A JSON value from the log with containers of its own, for node code to keep or change.

    What a node gets back from the log (a replayed output, an answer) must not be the log's
    own object: a change to it would change what the next turn replays.
    """
    kind = type(value)
    if kind is dict:
        return {key: fresh(item) for key, item in value.items()}
    if kind is list:
        return [fresh(item) for item in value]
    return value


def is_plain_json(value: Any) -> bool:
    """Whether the log keeps ``value`` as it is: a scalar, a short plain string, a short list of
    scalars (under every limit by construction)."""
    kind = type(value)
    if kind in _SCALARS or (kind is float and math.isfinite(value)):
        return True
    if kind is str:
        return value.isascii() and "\x00" not in value and len(value) < _SHORT
    return kind is list and len(value) < _SHORT and all(type(item) in _SCALARS for item in value)


def is_declared(annotation: Any) -> bool:
    """Say whether an annotation asks for validation (``Any`` and missing ones do not)."""
    return annotation not in (None, Any, object, typing.Any) and annotation is not dataclasses.MISSING


@lru_cache(maxsize=512)
def _adapter(annotation: Any) -> TypeAdapter[Any]:
    return TypeAdapter(annotation)


def validator(annotation: Any) -> Callable[[Any], Any] | None:
    """Return a function that validates a value into ``annotation``, or None if undeclared."""
    if not is_declared(annotation):
        return None
    try:
        adapter = _adapter(annotation)
    except TypeError:  # unhashable generic alias
        adapter = TypeAdapter(annotation)
    if isinstance(annotation, type) and not isinstance(annotation, types.GenericAlias):
        plain = annotation

        def check(value: Any) -> Any:
            return value if type(value) is plain else adapter.validate_python(value)

        return check
    return adapter.validate_python


def dumped(value: Any) -> Any:
    """A pydantic model validated by a schema as the JSON data ADK hands on (its None fields
    left out); anything else as it is."""
    return value.model_dump(mode="json", exclude_none=True) if isinstance(value, BaseModel) else value


def is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def json_schema(spec: Any) -> dict[str, Any] | None:
    """Turn a pydantic model, a type or a JSON Schema dict into a JSON Schema dict."""
    if spec is None:
        return None
    if isinstance(spec, dict):
        return spec
    schema: dict[str, Any] = spec.model_json_schema() if is_model(spec) else _adapter(spec).json_schema()
    return schema
