"""Who is calling: a personal API token (``Authorization: Bearer``) or the browser session.

A bearer token that is present but not valid is refused outright (``invalid-token``) rather
than falling back to the session: a script with a revoked or expired token should hear about
it. A read-only token is refused every change (``token-scope``, before anything is read); a
token limited to some workflows reaches only those (``wfapp.human.permissions`` narrows every
decision to them). The session is for same-origin use and must send the CSRF token on every
state change.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from wfapp.api import tokens
from wfapp.api.problems import Problem
from wfapp.human.permissions import limited_to

_INVALID = Problem(
    "invalid-token",
    "The API token is unknown, malformed, expired or revoked. Create a new one on the API tokens page.",
    headers={"WWW-Authenticate": 'Bearer realm="wfapp", error="invalid_token"'},
)
READS = frozenset({"GET", "HEAD", "OPTIONS"})


class TokenAuth(HttpBearer):
    """``Authorization: Bearer <token>`` with a token from ``wfapp.api.tokens``."""

    def __call__(self, request: HttpRequest) -> Any:
        value = request.headers.get(self.header)
        if not value:
            return None
        scheme, _, token = value.partition(" ")
        if scheme.lower() != "bearer":
            return None  # another scheme (Basic, say): the session may still authenticate
        return self.authenticate(request, token.strip())

    def authenticate(self, request: HttpRequest, token: str) -> Any:
        user = tokens.user_for(token)
        if user is None:
            raise _INVALID
        if user.api_read_only and request.method not in READS:
            raise Problem("token-scope", "This API token is read-only: create another one to make changes.")
        request.user = user
        return user


class SessionAuth(APIKeyCookie):
    """The logged-in browser session, with Django's CSRF check on unsafe methods."""

    param_name = settings.SESSION_COOKIE_NAME

    def __call__(self, request: HttpRequest) -> Any:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            return None
        if check_csrf(request) is not None:  # safe methods always pass
            raise Problem(
                "csrf-failed",
                "CSRF check failed: a logged-in session must send the 'X-CSRFToken' header "
                "with the value of the 'csrftoken' cookie.",
            )
        return user

    def authenticate(self, request: HttpRequest, key: str | None) -> Any:
        return self(request)


def caller(request: HttpRequest) -> Any:
    """The authenticated user of an API request."""
    return request.auth  # type: ignore[attr-defined]


def reaches(request: HttpRequest, workflow: str) -> bool:
    """Whether the caller's token (if limited to some workflows) reaches ``workflow``."""
    limit = limited_to(caller(request))
    return limit is None or workflow in limit


AUTH = [TokenAuth(), SessionAuth()]
