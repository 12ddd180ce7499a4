"""Login throttling (django-axes) read from wfapp's own settings, so tests and deployments set one name.

Three rules, over the failed logins of the last ``WFAPP_LOGIN_COOLOFF_MINUTES`` (the dashboard's
login and the admin's alike; while one applies even the right password is refused, with 429):

- **one username from one address**: ``WFAPP_LOGIN_FAILURE_LIMIT`` failures lock that pair out
  for the cool-off (axes' own lock; ``manage.py axes_reset`` lifts every lock at once);
- **one address, any usernames**: ``WFAPP_LOGIN_ADDRESS_LIMIT`` failures lock the address out
  for the cool-off, so one address cannot try a password on every username;
- **one username, any addresses**: past ``WFAPP_LOGIN_FAILURE_LIMIT`` failures, each further
  attempt waits a delay after the latest failure that doubles with every failure, from
  ``WFAPP_LOGIN_DELAY_SECONDS`` up to ``WFAPP_LOGIN_MAX_DELAY_SECONDS``. A delay, never a lock:
  attempts refused during it are not counted, so nobody can keep an account locked out.

The client's address is ``REMOTE_ADDR``, or, behind ``WFAPP_PROXY_COUNT`` trusted proxies, the
address the outermost of them saw (that many entries from the end of ``X-Forwarded-For``); the
header is ignored otherwise, since any client can send it.
"""

from __future__ import annotations

import ipaddress
import logging
import math
from datetime import datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.helpers import get_client_username
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Sum
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

logger = logging.getLogger(__name__)


def failure_limit(request: Any, credentials: Any) -> int:
    """How many failures lock a username out from an address (``AXES_FAILURE_LIMIT``)."""
    return int(settings.WFAPP_LOGIN_FAILURE_LIMIT)


def cool_off(request: Any) -> timedelta:
    """How long a lockout lasts, and how long failures count (``AXES_COOLOFF_TIME``)."""
    return timedelta(minutes=float(settings.WFAPP_LOGIN_COOLOFF_MINUTES))


def client_address(request: HttpRequest) -> str | None:
    """The client's address (``AXES_CLIENT_IP_CALLABLE``): ``X-Forwarded-For`` only when configured."""
    remote = request.META.get("REMOTE_ADDR")
    proxies = int(settings.WFAPP_PROXY_COUNT)
    if proxies <= 0:
        return remote
    hops = [hop.strip() for hop in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if hop.strip()]
    if len(hops) < proxies:
        logger.warning("a login came without the X-Forwarded-For its %d trusted proxies add", proxies)
        return remote
    try:
        return str(ipaddress.ip_address(hops[-proxies]))
    except ValueError:
        logger.warning("a login came with an X-Forwarded-For that is not an address: %r", hops[-proxies])
        return remote


def _recent() -> Any:
    return AccessAttempt.objects.filter(attempt_time__gte=timezone.now() - cool_off(None))


def address_wait(address: str | None) -> float:
    """Seconds until ``address`` may try again (0: it may now)."""
    if not address:
        return 0.0
    rows = (
        _recent()
        .filter(ip_address=address)
        .aggregate(n=Sum("failures_since_start"), last=Max("attempt_time"))
    )
    if (rows["n"] or 0) < int(settings.WFAPP_LOGIN_ADDRESS_LIMIT):
        return 0.0
    return _until(rows["last"] + cool_off(None))


def username_delay(failures: int) -> float:
    """The delay after the latest failure once a username has ``failures`` of them (0: none)."""
    over = failures - int(settings.WFAPP_LOGIN_FAILURE_LIMIT)
    if over <= 0:
        return 0.0
    top = float(settings.WFAPP_LOGIN_MAX_DELAY_SECONDS)
    return min(float(settings.WFAPP_LOGIN_DELAY_SECONDS) * 2.0 ** min(over - 1, 64), top)


def username_wait(username: str | None) -> float:
    """Seconds until ``username`` may be tried again from any address (0: now)."""
    if not username:
        return 0.0
    rows = (
        _recent().filter(username=username).aggregate(n=Sum("failures_since_start"), last=Max("attempt_time"))
    )
    delay = username_delay(rows["n"] or 0)
    if not delay:
        return 0.0
    return _until(rows["last"] + timedelta(seconds=delay))


def _until(moment: datetime) -> float:
    return max((moment - timezone.now()).total_seconds(), 0.0)


class LoginThrottle(AxesDatabaseHandler):  # type: ignore[misc]  # axes ships no types
    """Axes' database handler (``AXES_HANDLER``) with the address limit and the username delay."""

    def is_locked(self, request: Any, credentials: Any = None) -> bool:
        if super().is_locked(request, credentials):
            username = get_client_username(request, credentials)
            rows = _recent().filter(username=username, ip_address=request.axes_ip_address)
            last = rows.aggregate(last=Max("attempt_time"))["last"] or timezone.now()
            request.wfapp_login_wait = ("pair", (last + cool_off(request) - timezone.now()).total_seconds())
            return True
        for rule, wait in (
            ("address", address_wait(request.axes_ip_address)),
            ("username", username_wait(get_client_username(request, credentials))),
        ):
            if wait > 0:
                request.wfapp_login_wait = (rule, wait)
                return True
        return False


def refused(request: HttpRequest, original_response: Any = None, credentials: Any = None) -> HttpResponse:
    """The 429 page (``AXES_LOCKOUT_CALLABLE``): which rule refused, and when to try again."""
    rule, wait = getattr(request, "wfapp_login_wait", ("pair", cool_off(request).total_seconds()))
    seconds = max(math.ceil(wait), 1)
    context = {
        "rule": rule,
        "username": get_client_username(request, credentials) or "",
        "failure_limit": failure_limit(request, credentials),
        "address_limit": int(settings.WFAPP_LOGIN_ADDRESS_LIMIT),
        "wait": timedelta(seconds=seconds),
    }
    response = render(request, "registration/locked_out.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response
