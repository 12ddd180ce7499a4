"""Checking answers before anything is written: against their interrupt's JSON Schema (its
patterns on RE2, in linear time: ``patterns``), and against the asking they are given to
(``Asking``: its request seq and what was shown)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from jsonschema.exceptions import SchemaError

from .errors import (
    AskingChangedError,
    AskingClosedError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    WorkflowError,
)
from .patterns import Validator, unsafe_patterns

if TYPE_CHECKING:
    from .events import Interrupt
    from .replay import ReplayIndex


@dataclass(frozen=True, slots=True)
class Asking:
    """The one asking of an interrupt an answer is for: the seq of its ``interrupt`` event and,
    when known, the ``asking_digest`` of what the answerer was shown."""

    request_seq: int
    digest: str | None = None


def asking_digest(interrupt: Interrupt) -> str:
    """A digest of what an asking shows (message, payload, response schema), as hex."""
    shown = interrupt.model_dump(mode="json", include={"message", "payload", "response_schema"})
    text = json.dumps(shown, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def check_asking(index: ReplayIndex, interrupt_id: str, asking: Asking) -> None:
    """Refuse an answer pinned to an asking that is not the pending one, or not as shown."""
    pending = index.pending.get(interrupt_id)
    pending_seq = index.asked_at.get(interrupt_id) if pending is not None else None
    if pending is None or pending_seq != asking.request_seq:
        last = index.answered.get(interrupt_id)
        if last is not None and last.answer is not None and last.answer.request_seq == asking.request_seq:
            raise InterruptAlreadyAnswered(interrupt_id, last.author, last.timestamp)
        raise AskingClosedError(interrupt_id, asking.request_seq, pending_seq)
    if asking.digest is not None and asking.digest != asking_digest(pending):
        raise AskingChangedError(interrupt_id, asking.request_seq)


@lru_cache(maxsize=256)
def _validator(schema_text: str) -> Any:
    return Validator(json.loads(schema_text))


def field_errors(schema: dict[str, Any], value: Any) -> dict[str, list[str]]:
    """Return the schema violations of ``value``, keyed by dotted field path ("" = root)."""
    checker = _validator(json.dumps(schema, sort_keys=True))
    errors: dict[str, list[str]] = {}
    for error in checker.iter_errors(value):
        path = ".".join(str(part) for part in error.absolute_path)
        if error.validator == "required":
            missing = error.message.split("'")[1] if "'" in error.message else ""
            path = f"{path}.{missing}" if path and missing else missing or path
        errors.setdefault(path, []).append(error.message)
    return errors


def check_schema(schema: dict[str, Any], what: str) -> None:
    """Raise ``WorkflowError`` naming ``what`` when ``schema`` is not a valid JSON Schema."""
    try:
        Validator.check_schema(schema)
    except SchemaError as error:
        raise WorkflowError(f"{what} is not a valid JSON Schema: {error.message}") from error
    unsafe = unsafe_patterns(schema)
    if unsafe:
        raise WorkflowError(f"{what} is refused: {'; '.join(unsafe)}")


def check_answer(interrupt_id: str, schema: dict[str, Any] | None, value: Any) -> None:
    """Raise ``InvalidAnswerError`` with field errors when ``value`` breaks ``schema``."""
    if schema is None:
        return
    errors = field_errors(schema, value)
    if errors:
        raise InvalidAnswerError(interrupt_id, errors)
