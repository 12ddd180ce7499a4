"""Times as people say them: "just now", "5 minutes ago"."""

from __future__ import annotations

from datetime import timedelta

from django.test import Client
from django.urls import reverse
from django.utils import timezone

from wfapp.templatetags.wfapp_time import ago, clock


def test_ago() -> None:
    now = timezone.now()
    assert ago(now) == "just now"
    assert ago(now - timedelta(minutes=5, seconds=3)) == "5\xa0minutes ago"
    assert ago(None) == ""


def test_fresh_questions_and_runs_say_just_now(operator_client: Client, start_run) -> None:
    run = start_run()
    assert "just now" in operator_client.get(reverse("inbox")).content.decode()
    assert "0\xa0minutes" not in operator_client.get(reverse("runs")).content.decode()
    assert "started just now" in operator_client.get(reverse("run", args=[run])).content.decode()


def test_clock_says_the_date_only_when_it_is_not_today() -> None:
    now = timezone.now().replace(hour=12, minute=0, second=5, microsecond=0)
    assert clock(now) == "12:00:05 UTC"
    assert clock(now - timedelta(days=2)) == f"{now - timedelta(days=2):%Y-%m-%d} 12:00:05 UTC"
    assert clock(None) == ""
