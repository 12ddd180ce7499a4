"""What the API accepts as a request body: JSON, under the size limit, parsed once."""

from __future__ import annotations

import json
from typing import Any, cast

from django.conf import settings
from django.http import HttpRequest
from ninja.parser import Parser

from wfapp.api.problems import Problem


def _limit() -> int:
    return int(settings.WFAPP_MAX_ANSWER_BYTES)


def declared_length(request: HttpRequest | None) -> int:
    if request is None:
        return 0
    try:
        return max(int(request.META.get("CONTENT_LENGTH") or 0), 0)
    except ValueError:
        return 0


def too_large(request: HttpRequest | None, size: int | None = None) -> Problem:
    size = declared_length(request) if size is None else size
    sent = f" ({size} bytes)" if size else ""
    limit = _limit()
    return Problem(
        "payload-too-large",
        f"The request body is too large{sent}: the limit is {limit} bytes.",
        limit=limit,
    )


def check_size(request: HttpRequest) -> None:
    """Refuse a body over the limit before it is read (from its declared length)."""
    if declared_length(request) > _limit():
        raise too_large(request)


class JSONBodyParser(Parser):
    """JSON bodies only (``application/json`` or ``+json``), refused with a problem otherwise."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        media = (request.content_type or "").lower()
        if media != "application/json" and not media.endswith("+json"):
            shown = media or "none"
            raise Problem(
                "unsupported-media-type",
                f"The body must be JSON sent as 'Content-Type: application/json' (got {shown}).",
            )
        body = request.body
        if len(body) > _limit():
            raise too_large(request, len(body))
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as exc:
            raise Problem("malformed-json", f"The request body is not valid JSON: {exc}.") from None
        if not isinstance(data, dict):
            raise Problem(
                "validation",
                "The request body must be a JSON object.",
                errors=[{"field": "body", "message": "Expected a JSON object."}],
            )
        return cast(dict[str, Any], data)
