"""The API tokens page: a user creates and revokes their own personal tokens.

A new token is shown once, on a page of its own that is never cached (``no-store``), not
in a message cookie.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import add_never_cache_headers
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from wfapp.api import tokens
from wfapp.errors import NotPermitted
from wfapp.human.permissions import can_view
from wfapp.models import ApiToken
from wfapp.registry import all_workflows
from wfapp.web import queries

EXPIRY_CHOICES = [("30", "30 days"), ("90", "90 days"), ("365", "a year"), ("never", "never")]


def _owner(request: HttpRequest) -> Any:
    return request.user  # logged in: the decorators below see to it


def _page(request: HttpRequest, *, error: str = "", status: int = 200) -> HttpResponse:
    context = {
        "tokens": ApiToken.objects.filter(user=_owner(request)),
        "error": error,
        "name_limit": tokens.NAME_LIMIT,
        "expiry_choices": EXPIRY_CHOICES,
        "default_days": str(tokens.default_days() or "never"),
        "workflows": [name for name in all_workflows() if can_view(request.user, name)],
        "pending_count": queries.pending_count(request.user),
        "api_url": request.build_absolute_uri("/api/v1/"),
    }
    return render(request, "wfapp/tokens.html", context, status=status)


def _days(value: str) -> Any:
    if not value:
        return tokens.DEFAULT
    if value == "never":
        return None
    if not value.isdigit():
        raise ValueError("Pick how long the token lasts.")
    return int(value)


@require_http_methods(["GET", "POST"])
@login_required
@never_cache
def tokens_page(request: HttpRequest) -> HttpResponse:
    """GET lists the user's tokens; POST creates one and shows it, once, on a page of its own."""
    if request.method == "GET":
        return _page(request)
    try:
        record, text = tokens.issue(
            request.user,
            request.POST.get("name", ""),
            by=request.user,
            days=_days(request.POST.get("days", "")),
            read_only=request.POST.get("read_only") == "on",
            workflows=request.POST.getlist("workflows"),
        )
    except (ValueError, NotPermitted) as refused:
        return _page(request, error=str(refused), status=422)
    return created_page(request, "wfapp/token_created.html", record, text)


def created_page(
    request: HttpRequest, template: str, record: ApiToken, text: str, **extra: Any
) -> HttpResponse:
    """The page that shows a new token's text, this once: never stored by a cache or the browser."""
    context = {"token": record, "text": text, "pending_count": queries.pending_count(request.user), **extra}
    response = render(request, template, context)
    add_never_cache_headers(response)
    return response


@require_POST
@login_required
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    if not tokens.revoke(request.user, token_id):
        if not ApiToken.objects.filter(pk=token_id, user=_owner(request)).exists():
            raise Http404("No such token")
    return redirect("api-tokens")
