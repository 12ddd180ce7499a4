"""``/api/``: the JSON API under ``v1/`` and the API tokens page (the root URLconf includes this).

API views authenticate themselves (token or session), so the login-required middleware
leaves them alone; whatever the URL, a refusal is a problem document.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver, include, path, re_path
from django.views.decorators.csrf import csrf_exempt

from wfapp.api import views_tokens
from wfapp.api.app import api
from wfapp.api.problems import Problem
from wfapp.api.requests import check_size


def _refusals(response: HttpResponse) -> HttpResponse:
    if response.status_code == 405 and not response.get("Content-Type", "").startswith("application/problem"):
        allowed = response.get("Allow", "")
        problem = Problem("method-not-allowed", f"Use {allowed or 'another method'} here.")
        refused = problem.response()
        refused["Allow"] = allowed
        return refused
    return response


def _api_view(view: Callable[..., Any]) -> Callable[..., Any]:
    """Skip the login redirect, refuse oversized bodies unread, and make 405s problem documents."""
    if asyncio.iscoroutinefunction(view):

        @wraps(view)
        async def wrapped_async(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                check_size(request)
            except Problem as refused:
                return refused.response(request)
            return _refusals(await view(request, *args, **kwargs))

        wrapped: Callable[..., Any] = wrapped_async
    else:

        @wraps(view)
        def wrapped_sync(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            try:
                return _refusals(view(request, *args, **kwargs))
            except Http404:  # the API's root: nothing there but the docs
                return Problem("not-found", "See /api/v1/docs for the API's resources.").response(request)

        wrapped = wrapped_sync
    wrapped.login_required = False  # type: ignore[attr-defined]
    return wrapped


def _patterns() -> list[URLPattern | URLResolver]:
    patterns, _, _ = api.urls
    for pattern in patterns:
        if isinstance(pattern, URLPattern):
            pattern.callback = _api_view(pattern.callback)
    return patterns


@csrf_exempt
def not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    return Problem("not-found", f"No API resource at {request.path}.").response(request)


not_found.login_required = False  # type: ignore[attr-defined]

urlpatterns = [
    path("v1/", include((_patterns(), "ninja"), namespace="api-v1")),
    re_path(r"^v1/(?P<rest>.*)$", not_found),
    path("tokens/", views_tokens.tokens_page, name="api-tokens"),
    path("tokens/<int:token_id>/revoke/", views_tokens.revoke, name="api-token-revoke"),
]
