"""The API tokens page: a user creates (and sees once) and revokes their own personal tokens."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from wfapp.web import queries

from . import tokens
from .models import ApiToken


def _owner(request: HttpRequest) -> Any:
    return request.user  # logged in: the decorators below see to it


def _page(request: HttpRequest, *, created: str = "", error: str = "", status: int = 200) -> HttpResponse:
    context = {
        "tokens": ApiToken.objects.filter(user=_owner(request)),
        "created": created,
        "error": error,
        "name_limit": tokens.NAME_LIMIT,
        "pending_count": queries.pending_count(request.user),
        "api_url": request.build_absolute_uri("/api/v1/"),
    }
    return render(request, "wfapp/tokens.html", context, status=status)


@require_http_methods(["GET", "POST"])
@login_required
def tokens_page(request: HttpRequest) -> HttpResponse:
    """GET lists the user's tokens; POST creates one and shows it this once."""
    if request.method == "GET":
        return _page(request)
    try:
        _, text = tokens.issue(request.user, request.POST.get("name", ""))
    except ValueError as refused:
        return _page(request, error=str(refused), status=422)
    return _page(request, created=text)


@require_POST
@login_required
def revoke(request: HttpRequest, token_id: int) -> HttpResponse:
    if not ApiToken.objects.filter(pk=token_id, user=_owner(request)).exists():
        raise Http404("No such token")
    tokens.revoke(request.user, token_id)
    return redirect("api-tokens")
