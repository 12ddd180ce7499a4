"""What a question was asked on: a digest of the asking node's input, so an answer is reused
only for the question it was given to.

A question's ``interrupt`` event carries, as its ``input``, a digest of the input of the node
that asked it (for a ``RequestInput`` input, of the question itself: message, payload and
response schema, not its generated id). When a replay reaches that path with an input whose
digest differs, the recorded answer belongs to another question: the node runs afresh and
asks again (``SessionRun.execute``), and the old answers at that path are forgotten once the
new question is recorded (``ReplayIndex``). A node whose question depends on something other
than its input (state, the clock) is not covered.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic_core import PydanticSerializationError, to_jsonable_python

from .events import RequestInput
from .values import json_schema


def input_digest(value: Any) -> str | None:
    """A short digest of a node's input as JSON; None when it cannot be written as JSON."""
    if isinstance(value, RequestInput):
        try:
            schema = json_schema(value.response_schema)
        except Exception:  # a schema pydantic cannot build: the question has no digest
            return None
        value = {"message": value.message, "payload": value.payload, "response_schema": schema}
    try:
        text = json.dumps(to_jsonable_python(value), sort_keys=True, ensure_ascii=False, allow_nan=False)
    except (PydanticSerializationError, TypeError, ValueError):
        return None
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def asked_for_other(asked_on: dict[str, tuple[str, list[str]]], path: str, node_input: Any) -> bool:
    """Whether the questions recorded at ``path`` were asked on another input than ``node_input``."""
    recorded = asked_on.get(path)
    if recorded is None:
        return False
    digest = input_digest(node_input)
    return digest is not None and digest != recorded[0]
