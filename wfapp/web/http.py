"""Small helpers the dashboard's views share: fragment or page, size limits, notices."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django_htmx.http import reswap, retarget


def is_fragment_request(request: HttpRequest) -> bool:
    """An htmx request that wants a fragment (boosted navigation wants the whole page)."""
    htmx = getattr(request, "htmx", None)
    if not htmx:
        return False
    return not htmx.boosted and not htmx.history_restore_request


def page_or_fragment(request: HttpRequest, page: str, fragment: str, context: dict[str, Any]) -> HttpResponse:
    return render(request, f"{page}#{fragment}" if is_fragment_request(request) else page, context)


def too_large(request: HttpRequest) -> bool:
    """Whether the body is over the answer limit (checked before the body is read)."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        return True
    return length > int(settings.WFAPP_MAX_ANSWER_BYTES)


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{round(n / 1024)} KB"


def too_large_message(request: HttpRequest, what: str) -> str:
    """Say how large the body was and what the limit is, so the person knows how much to cut."""
    try:
        length = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        length = 0
    limit = int(settings.WFAPP_MAX_ANSWER_BYTES)
    sent = f" ({_size(length)})" if length else ""
    return f"That {what} is too large{sent}: the limit is {_size(limit)}. Shorten it and send it again."


def notice(
    request: HttpRequest,
    message: str,
    *,
    status: int,
    kind: str = "error",
    target: str | None = None,
    swap: str = "outerHTML",
) -> HttpResponse:
    """A short message fragment; with `target`, it goes there (by `swap`) instead of the form."""
    response = render(request, "wfapp/live.html#notice", {"message": message, "kind": kind}, status=status)
    if target is not None and is_fragment_request(request):
        response = reswap(retarget(response, target), swap)  # type: ignore[arg-type]
    return response
