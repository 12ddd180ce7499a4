"""Template filters for times as people say them, in the viewer's zone (``web.viewer_zone``)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince, timeuntil

register = template.Library()


@register.filter
def ago(moment: datetime | None) -> str:
    """Say how long ago: "just now" within a minute, else "3 minutes ago" (two units at most)."""
    if moment is None:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"


def _zone_name(moment: datetime) -> str:
    return moment.tzname() or timezone.get_current_timezone_name()


@register.filter
def clock(moment: datetime | None) -> str:
    """The moment to the second on the viewer's clock: "21:50:03 UTC" today (the zone's
    abbreviation), with the date on other days."""
    if moment is None:
        return ""
    moment = timezone.localtime(moment)
    if moment.date() == timezone.localdate():
        return f"{moment:%H:%M:%S} {_zone_name(moment)}"
    return f"{moment:%Y-%m-%d %H:%M:%S} {_zone_name(moment)}"


@register.filter
def local(moment: datetime | None) -> str:
    """The moment to the minute on the viewer's clock, with its zone: "2026-12-08 09:00 EST"."""
    if moment is None:
        return ""
    moment = timezone.localtime(moment)
    return f"{moment:%Y-%m-%d %H:%M} {_zone_name(moment)}"


@register.filter
def utc(moment: datetime | None) -> str:
    """The moment in UTC, for a title to hover: "2026-12-08 14:00:00 UTC"."""
    if moment is None:
        return ""
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M:%S} UTC"


@register.filter
def due_in(moment: datetime | None) -> str:
    """How far a due time is: "in 5 days", "overdue by 2 hours" (the largest unit only)."""
    if moment is None:
        return ""
    now = timezone.now()
    if moment >= now:
        return "due now" if moment - now < timedelta(minutes=1) else f"in {timeuntil(moment, now, depth=1)}"
    if now - moment < timedelta(minutes=1):
        return "due now"
    return f"overdue by {timesince(moment, now, depth=1)}"
