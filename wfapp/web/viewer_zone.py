"""The viewer's time zone and how they write dates: the browser says both
(``static/wfapp/times.js`` sets the ``wfapp_tz`` and ``wfapp_dates`` cookies from ``Intl``),
and every page and live update is rendered in that zone (``timezone.activate``) and reads the
dates typed into filters in that order ("dmy": 31/01/2026, "mdy": 01/31/2026).
Without the cookies, or with a name that is no zone, times are in UTC and dates day first.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.http import HttpRequest, HttpResponse
from django.utils import timezone

COOKIE = "wfapp_tz"
DATES_COOKIE = "wfapp_dates"
MAX_NAME = 64  # the longest IANA zone name is 32 characters
ORDERS = ("dmy", "mdy", "ymd")
_order: ContextVar[str] = ContextVar("wfapp_date_order", default="dmy")


def date_order() -> str:
    """How the viewer writes a date's day, month and year: "dmy", "mdy" or "ymd"."""
    return _order.get()


def zone_from(cookies: Mapping[str, str]) -> ZoneInfo | None:
    """The zone the ``wfapp_tz`` cookie names, or None when absent or not a zone."""
    name = cookies.get(COOKIE, "")
    if not name or len(name) > MAX_NAME or not all(c.isalnum() or c in "/_+-" for c in name):
        return None
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return None


def activate_for(cookies: Mapping[str, str]) -> None:
    """Render what follows (in this context) in the zone the cookies name, else in UTC."""
    said = cookies.get(DATES_COOKIE, "")
    _order.set(said if said in ORDERS else "dmy")
    zone = zone_from(cookies)
    if zone is None:
        timezone.deactivate()
    else:
        timezone.activate(zone)


class ViewerZoneMiddleware:
    """Each request is rendered in the viewer's zone."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        activate_for(request.COOKIES)
        try:
            return self.get_response(request)
        finally:
            timezone.deactivate()
