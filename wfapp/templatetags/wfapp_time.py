"""Template filters for times as people say them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from django import template
from django.utils import timezone
from django.utils.timesince import timesince

register = template.Library()


@register.filter
def ago(moment: datetime | None) -> str:
    """Say how long ago: "just now" within a minute, else "3 minutes ago" (two units at most)."""
    if moment is None:
        return ""
    if timezone.now() - moment < timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def clock(moment: datetime | None) -> str:
    """The moment to the second, in UTC: "21:50:03 UTC" today, with the date on other days."""
    if moment is None:
        return ""
    moment = moment.astimezone(UTC)
    if moment.date() == timezone.now().astimezone(UTC).date():
        return f"{moment:%H:%M:%S} UTC"
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC"
