"""Logged out mid-page (the session expired): send the person to log in, then back to the page.

Django's ``LoginRequiredMiddleware`` answers every anonymous request with a redirect to the
login page. An htmx request would follow it and swap the login page into a card, losing
what was typed; a plain form POST would come back after login as a GET of the action. Here
an htmx request gets ``401`` with ``HX-Redirect`` (htmx navigates the whole page; the
page's ``drafts.js`` keeps what was typed in ``sessionStorage`` first and restores it on
return), and both come back to the page they were on, never to the action.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.contrib.auth import middleware
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.utils.http import url_has_allowed_host_and_scheme


def _page_path(request: HttpRequest, url: str) -> str | None:
    """The path and query of ``url`` if it is a page of this site, else None."""
    if not url or not url_has_allowed_host_and_scheme(url, {request.get_host()}, request.is_secure()):
        return None
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


class LoginRequiredMiddleware(middleware.LoginRequiredMiddleware):
    # The stubs say a redirect; Django only returns what this gives back.
    def handle_no_permission(self, request: HttpRequest, view_func: Any) -> HttpResponse:  # type: ignore[override]
        htmx = bool(getattr(request, "htmx", False))
        if not htmx and request.method in ("GET", "HEAD"):
            return super().handle_no_permission(request, view_func)
        # The page the person is on: htmx names it; a plain POST came from its Referer.
        page = request.headers.get("HX-Current-URL", "") if htmx else request.headers.get("Referer", "")
        back = _page_path(request, page) or "/"
        login = redirect_to_login(
            back, resolve_url(self.get_login_url(view_func)), self.get_redirect_field_name(view_func)
        )
        if not htmx:
            return login
        response = HttpResponse(
            "Your session has ended: log in again.", status=401, content_type="text/plain"
        )
        response["HX-Redirect"] = login["Location"]
        return response
