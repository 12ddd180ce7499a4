"""Read what a live page sends over its socket: JSON objects of a few positions, checked strictly.

A page says where it is (a seq, a watermark, the ids of the cards it shows) in its hello. A
frame that is not a JSON object, or a position that is not a whole number the database can hold
(a bool, a float, a string of digits from another script, anything past 2^63 - 1), makes the
frame unreadable: the consumer ignores it and keeps the socket open, so no frame can crash it.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

logger = logging.getLogger(__name__)

MAX_FRAME = 4096  # clients only ever send a small hello (characters)
MAX_POSITION = 2**63 - 1  # the largest seq or id a bigint column holds


class BadFrame(ValueError):
    """A frame the consumer cannot read; the message says what was wrong."""


def parse(text: str | None) -> dict[str, Any]:
    """The frame as a JSON object, or ``BadFrame``."""
    if not text:
        raise BadFrame("an empty or binary frame")
    if len(text) > MAX_FRAME:
        raise BadFrame(f"a frame of {len(text)} characters (at most {MAX_FRAME})")
    try:
        message = json.loads(text)
    except (ValueError, RecursionError):
        raise BadFrame("a frame that is not JSON") from None
    if not isinstance(message, dict):
        raise BadFrame("a frame that is not a JSON object")
    if not isinstance(message.get("type", ""), str):
        raise BadFrame("a frame whose type is not a string")
    return message


def position(value: Any, what: str) -> int:
    """A seq, watermark or id: a JSON integer, or ASCII digits (from a URL), 0 to ``MAX_POSITION``."""
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 19:
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_POSITION:
        raise BadFrame(f"{what} must be a whole number from 0 to 2^63 - 1")
    return value


def positions(values: Any, what: str, limit: int) -> set[int]:
    """A list of positions (at most ``limit`` are read)."""
    if not isinstance(values, list):
        raise BadFrame(f"{what} must be a list")
    return {position(value, what) for value in values[:limit]}


def moment(value: Any) -> datetime | None:
    """An ISO 8601 time with its offset, in UTC; None when absent or unreadable."""
    if not isinstance(value, str) or len(value) > 64:
        return None
    try:
        when = datetime.fromisoformat(value)
        return when.astimezone(UTC) if when.tzinfo is not None else None
    except (ValueError, OverflowError):
        return None


def refused(consumer: str, error: BadFrame) -> None:
    logger.debug("%s ignored %s", consumer, error)
