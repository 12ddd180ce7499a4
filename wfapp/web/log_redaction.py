"""Keep answer-link tokens out of the logs: ``/answer-link/<token>/`` is logged as ``[redacted]``.

A link's token lets whoever holds it answer as its recipient until it is used or expires;
Django logs the path of every 4xx and 5xx response (a 410 for a used link, a 404 when links
are off), so the path is rewritten before any handler formats the record.
"""

from __future__ import annotations

import logging
import re
from typing import Any

TOKEN = re.compile(r"(/answer-link/)[^/?#\s\"']+")


def redact(value: Any) -> Any:
    """``value`` with any answer-link token replaced (values that are not text are kept)."""
    return TOKEN.sub(r"\1[redacted]", value) if isinstance(value, str) else value


class RedactAnswerLinks(logging.Filter):
    """A logging filter redacting answer-link tokens in a record's message and arguments."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = redact(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact(arg) for arg in record.args)
        elif isinstance(record.args, dict):
            record.args = {key: redact(arg) for key, arg in record.args.items()}
        return True
