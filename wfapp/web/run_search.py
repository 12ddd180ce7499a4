"""Finding runs: the runs list's filters read from GET parameters, checked, and applied.

The same parameters serve the runs page, its live socket and the JSON API's ``GET runs``, so
a filtered list is a URL to share. Every value is checked: a bad one is a `BadSearch` naming
each mistake, and nothing is listed as if it had been filtered.

The text search looks for the words in the stored input and output JSON, case-insensitive,
over every run, through the index `wfapp.store.search_index` keeps on each database, and in
the run's summary ("Ana: 2,300.00 travel", `wfapp.run_labels`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass, fields
from datetime import UTC, date, datetime, timedelta
from typing import Any
from urllib.parse import urlencode

from django.db import connections
from django.db.models import DurationField, ExpressionWrapper, F, Q, QuerySet
from django.utils import timezone

from wfapp.models import RunStatus, Session
from wfapp.store import search_index
from wfapp.web import viewer_zone

MAX_TEXT = 200
_DURATION = re.compile(r"([0-9]{1,7})\s*([smhd]?)")
_UNITS = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


class BadSearch(ValueError):
    """Filters that cannot be applied; `problems` says what is wrong with each."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = problems


@dataclass(frozen=True)
class RunSearch:
    """What the runs list is filtered by; empty strings and None filter nothing."""

    status: str = ""
    workflow: str = ""
    q: str = ""  # part of the run id
    text: str = ""  # in the input or output
    started_from: str = ""  # as written: a date or a date and time (the viewer's zone, else UTC)
    started_to: str = ""
    by: str = ""  # the starter's username
    min_duration: str = ""  # as written: 90, 90s, 5m, 2h, 1d
    max_duration: str = ""

    @property
    def active(self) -> bool:
        return any(asdict(self).values())

    def query(self) -> str:
        """These filters as a URL query (without '?'), to link to the same list."""
        return urlencode({k: v for k, v in asdict(self).items() if v})

    # The parsed values (parse() has checked that each parses).

    def start_bounds(self) -> tuple[datetime | None, datetime | None]:
        return _moment(self.started_from, end=False), _moment(self.started_to, end=True)

    def duration_bounds(self) -> tuple[timedelta | None, timedelta | None]:
        return _duration(self.min_duration), _duration(self.max_duration)


def parse(params: Mapping[str, Any]) -> RunSearch:
    """The filters in `params` (a QueryDict or a dict); `BadSearch` naming every bad value."""
    values = {f.name: _text(params.get(f.name)) for f in fields(RunSearch)}
    problems = []
    if values["status"] and values["status"] not in RunStatus.values:
        problems.append(f"Status {values['status']!r} is not one of: {', '.join(RunStatus.values)}.")
    for key, limit in (("workflow", 200), ("q", 100), ("text", MAX_TEXT), ("by", 150)):
        if len(values[key]) > limit:
            problems.append(f"{_LABELS[key]} is longer than {limit} characters.")
    for key in ("started_from", "started_to"):
        if values[key] and _moment(values[key], end=False) is None:
            problems.append(
                f"{_LABELS[key]} {_shown(values[key])} is not a date: write {_example()}, 2026-01-31 "
                "or 2026-01-31T14:30 (in your time zone)."
            )
    for key in ("min_duration", "max_duration"):
        if values[key] and _duration(values[key]) is None:
            problems.append(
                f"{_LABELS[key]} {_shown(values[key])} is not a duration: write seconds (90) "
                "or a number with s, m, h or d (90s, 5m, 2h, 1d)."
            )
    if problems:
        raise BadSearch(problems)
    return RunSearch(**values)  # an empty range (from after to, min over max) simply lists no runs


_LABELS = {
    "workflow": "Workflow",
    "q": "Run id",
    "text": "Search in input and output",
    "by": "Started by",
    "started_from": "Started from",
    "started_to": "Started to",
    "min_duration": "Min duration",
    "max_duration": "Max duration",
}


def _text(value: Any) -> str:
    return str(value or "").replace("\x00", "").strip()  # PostgreSQL refuses NUL


def _shown(value: str) -> str:
    return repr(value if len(value) <= 30 else value[:29] + "…")


def _moment(text: str, *, end: bool) -> datetime | None:
    """A date (the day's start, or the next day's with `end`) or a date and time, written as
    ISO 8601 or as the viewer writes dates (``viewer_zone.date_order``: 31/01/2026 14:30), in the
    viewer's time zone (UTC for the API) unless it gives its offset."""
    if not text:
        return None
    zone = timezone.get_current_timezone()
    try:
        if len(text) == 10 and text[4] == "-":
            day = date.fromisoformat(text)
            moment = datetime(day.year, day.month, day.day) + timedelta(days=1 if end else 0)
        else:
            moment = _written(text, end=end) or datetime.fromisoformat(text)
    except (ValueError, OverflowError):
        if len(text) == 10 and text.startswith("9999-12-31"):
            return _LATEST  # the end of the last day there is
        return None
    # No run started before 1900 or after 9000: clamp, so converting the zone cannot overflow.
    if moment.year < 1900:
        return _EARLIEST
    if moment.year > 9000:
        return _LATEST
    return moment.replace(tzinfo=zone) if moment.tzinfo is None else moment


_WRITTEN = re.compile(r"([0-9]{1,4})[./-]([0-9]{1,2})[./-]([0-9]{1,4})(?:[ T,]+([0-9]{1,2}):([0-9]{2}))?")


def _written(text: str, *, end: bool) -> datetime | None:
    """A date as the viewer writes it (day, month and year in their order), perhaps with a time."""
    found = _WRITTEN.fullmatch(text.strip())
    if found is None:
        return None
    parts = dict(zip(viewer_zone.date_order(), map(int, found.groups()[:3]), strict=True))
    if found[1] and len(found[1]) == 4:  # 2026/01/31 is year first in any order
        parts = {"y": int(found[1]), "m": int(found[2]), "d": int(found[3])}
    if parts["y"] < 1000:
        return None
    moment = datetime(parts["y"], parts["m"], parts["d"])
    if found[4] is not None:
        return moment.replace(hour=int(found[4]), minute=int(found[5]))
    return moment + timedelta(days=1 if end else 0)


def _example() -> str:
    """The last day of January 2026 as the viewer writes dates."""
    return {"dmy": "31/01/2026", "mdy": "01/31/2026", "ymd": "2026/01/31"}[viewer_zone.date_order()]


_EARLIEST = datetime(1900, 1, 1, tzinfo=UTC)
_LATEST = datetime(9000, 1, 1, tzinfo=UTC)


def _duration(text: str) -> timedelta | None:
    match = _DURATION.fullmatch(text.lower()) if text else None
    if match is None:
        return None
    return timedelta(seconds=int(match[1]) * _UNITS[match[2]])


# -- applying them ------------------------------------------------------------------------------


def apply(rows: QuerySet[Session], search: RunSearch) -> QuerySet[Session]:
    """`rows` narrowed by `search`."""
    if search.status:
        rows = rows.filter(status=search.status)
    if search.workflow:
        rows = rows.filter(workflow=search.workflow)
    if search.q:
        rows = rows.filter(id__icontains=search.q)
    if search.by:
        rows = rows.filter(created_by__username__iexact=search.by)
    low, high = search.start_bounds()
    if low:
        rows = rows.filter(created_at__gte=low)
    if high:
        rows = rows.filter(created_at__lt=high)
    shortest, longest = search.duration_bounds()
    if shortest is not None or longest is not None:
        took = ExpressionWrapper(F("updated_at") - F("created_at"), output_field=DurationField())
        rows = rows.alias(took=took)
        if shortest is not None:
            rows = rows.filter(took__gte=shortest)
        if longest is not None:
            rows = rows.filter(took__lte=longest)
    if not search.text:
        return rows
    vendor = connections[rows.db].vendor
    found = Q(summary__icontains=search.text)
    for variant in _spellings(search.text.lower()):
        found |= search_index.containing(vendor, variant)
    return rows.filter(found)


def _spellings(text: str) -> set[str]:
    """`text` as it may be stored in JSON: as typed, and escaped (SQLite keeps \\u00eb for ë)."""
    return {text, json.dumps(text)[1:-1], json.dumps(text, ensure_ascii=False)[1:-1]}


def matches(session: Session, search: RunSearch) -> bool:
    """Whether a run just created belongs in a list with these filters (for live inserts)."""
    low, high = search.start_bounds()
    shortest, longest = search.duration_bounds()
    took = session.updated_at - session.created_at
    stored = json.dumps([session.input, session.output], ensure_ascii=False).lower() + session.summary.lower()
    starter = session.created_by.get_username() if session.created_by else ""
    return (
        (not search.status or session.status == search.status)
        and (not search.workflow or session.workflow == search.workflow)
        and (not search.q or search.q.lower() in session.pk.lower())
        and (not search.by or starter.lower() == search.by.lower())
        and (low is None or session.created_at >= low)
        and (high is None or session.created_at < high)
        and (shortest is None or took >= shortest)
        and (longest is None or took <= longest)
        and (not search.text or search.text.lower() in stored)
    )
