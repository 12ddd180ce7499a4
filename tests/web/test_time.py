"""Times as people say them: "just now", "5 minutes ago"."""

from __future__ import annotations

from datetime import timedelta
from zoneinfo import ZoneInfo

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


def test_times_read_on_the_viewers_clock_with_utc_and_how_far_a_due_time_is() -> None:
    from wfapp.templatetags.wfapp_time import due_in, local, utc

    moment = timezone.now().replace(month=1, day=15, hour=14, minute=30, second=0, microsecond=0)
    with timezone.override(ZoneInfo("America/New_York")):
        assert local(moment) == f"{moment:%Y}-01-15 09:30 EST"
        assert clock(moment).endswith("09:30:00 EST")
    assert utc(moment) == f"{moment:%Y}-01-15 14:30:00 UTC"
    now = timezone.now()
    assert due_in(now + timedelta(days=5, minutes=1)) == "in 5\xa0days"
    assert due_in(now - timedelta(hours=2, minutes=5)) == "overdue by 2\xa0hours"
    assert due_in(None) == ""


def test_a_runs_filter_date_is_read_as_the_viewer_writes_it_in_their_zone(operator_client: Client) -> None:
    from datetime import UTC, datetime

    from wfapp.web import run_search, viewer_zone

    operator_client.cookies["wfapp_tz"] = "Asia/Tokyo"
    operator_client.cookies["wfapp_dates"] = "mdy"
    assert operator_client.get("/runs/?started_from=12/31/2026").status_code == 200
    viewer_zone.activate_for({"wfapp_tz": "Asia/Tokyo", "wfapp_dates": "mdy"})
    try:
        search = run_search.parse({"started_from": "12/31/2026", "started_to": "12/31/2026 18:00"})
        low, high = search.start_bounds()
    finally:
        viewer_zone.activate_for({})
    assert low == datetime(2026, 12, 30, 15, 0, tzinfo=UTC)  # midnight in Tokyo
    assert high == datetime(2026, 12, 31, 9, 0, tzinfo=UTC)
    problems = operator_client.get("/runs/?started_from=31/12/2026").content.decode()  # not mdy
    assert "is not a date: write 01/31/2026" in problems
