"""Login throttling (django-axes) read from wfapp's own settings, so tests and deployments set one name.

``WFAPP_LOGIN_FAILURE_LIMIT`` failed logins for one username from one address lock that
pair out for ``WFAPP_LOGIN_COOLOFF_MINUTES``; the dashboard's login and the admin's both
go through it (axes' authentication backend), and while locked out even the right
password is refused. ``manage.py axes_reset`` lifts every lockout at once.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings


def failure_limit(request: Any, credentials: Any) -> int:
    """How many failures lock a username out from an address (``AXES_FAILURE_LIMIT``)."""
    return int(settings.WFAPP_LOGIN_FAILURE_LIMIT)


def cool_off(request: Any) -> timedelta:
    """How long a lockout lasts (``AXES_COOLOFF_TIME``)."""
    return timedelta(minutes=float(settings.WFAPP_LOGIN_COOLOFF_MINUTES))
