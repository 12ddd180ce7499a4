"""A failure's formatted traceback, as the log keeps it with the node's ``error`` event."""

from __future__ import annotations

import traceback

from .limits import current, safe_text

MAX_TRACEBACK_CHARS = 32_000  # the innermost frames are kept when a traceback is longer


def formatted(error: BaseException) -> str:
    """``error``'s traceback with its causes, cut at the front to fit the log's limits."""
    text = "".join(traceback.format_exception(error))
    limit = min(MAX_TRACEBACK_CHARS, current().max_value_bytes // 4 - 100)
    if len(text) > limit:
        text = f"… ({len(text) - limit} characters cut)\n" + text[-limit:]
    return safe_text(text)
