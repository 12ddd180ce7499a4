"""Small helpers the dashboard's views share: fragment or page, size limits, notices."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse
from django.http.request import RawPostDataException
from django.shortcuts import render
from django_htmx.http import reswap, retarget


def is_fragment_request(request: HttpRequest) -> bool:
    """An htmx request that wants a fragment (boosted navigation wants the whole page)."""
    htmx = getattr(request, "htmx", None)
    if not htmx:
        return False
    return not htmx.boosted and not htmx.history_restore_request


def page_or_fragment(
    request: HttpRequest, page: str, fragment: str, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    return render(
        request, f"{page}#{fragment}" if is_fragment_request(request) else page, context, status=status
    )


def body_size(request: HttpRequest) -> int:
    """How large the body is: its Content-Length when that is already over the limit (so it is
    never read), else the bytes actually received (a chunked body declares no length)."""
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        declared = 0
    limit = int(settings.WFAPP_MAX_ANSWER_BYTES)
    if declared > limit:
        return declared
    try:
        return max(declared, len(request.body))
    except RequestDataTooBig:  # past Django's own DATA_UPLOAD_MAX_MEMORY_SIZE
        return max(declared, int(settings.DATA_UPLOAD_MAX_MEMORY_SIZE or 0) + 1, limit + 1)
    except RawPostDataException:  # a multipart body already parsed: count what it held
        return sum(len(key) + len(value) for key, values in request.POST.lists() for value in values)


def too_large(request: HttpRequest) -> bool:
    """Whether the body is over the answer limit (``WFAPP_MAX_ANSWER_BYTES``)."""
    return body_size(request) > int(settings.WFAPP_MAX_ANSWER_BYTES)


def _size(n: int) -> str:
    return f"{n} bytes" if n < 1024 else f"{round(n / 1024)} KB"


def too_large_message(request: HttpRequest, what: str) -> str:
    """Say how large the body was and what the limit is, so the person knows how much to cut."""
    limit = int(settings.WFAPP_MAX_ANSWER_BYTES)
    return f"That {what} is too large ({_size(body_size(request))}): the limit is {_size(limit)}. Shorten it and send it again."


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
