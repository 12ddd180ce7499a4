"""The inbox page's server time with many pending interrupts among many answered ones.

Seeds runs and their inbox rows in bulk (``bulk_create``; each run has ``answered // pending``
answered questions and one pending, spread over the demo workflows' names and schemas), then
times the real view through Django's test ``Client`` (middleware, session, authentication,
permission check, template) as a logged-in user holding ``wfapp.answer_interrupt``: the first
page, a deep page in the middle of the pending list as a full page (the "Load more" link
followed without JavaScript) and as the htmx fragment the button fetches (on PostgreSQL after an
``ANALYZE``, as autovacuum would soon run on a live database). Queries are counted
with ``CaptureQueriesContext`` once after a tenth of the data is in and again with all of it:
the counts must not grow.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from bench.dashboard_stats import percentiles

SCHEMAS: dict[str, dict[str, Any]] = {
    "expense_approval": {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string", "default": ""}},
        "required": ["approved"],
    },
    "document_review": {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "feedback": {"type": "string"}},
        "required": ["approved"],
    },
    "batch_review": {
        "type": "object",
        "properties": {
            "verdict": {"type": "string", "enum": ["pass", "fail", "escalate"]},
            "note": {"type": "string"},
        },
        "required": ["verdict"],
    },
}
WORKFLOWS = tuple(SCHEMAS)
BATCH = 2000


def seed(pending: int, answered: int, *, start: int = 0, stop: int | None = None) -> None:
    """Create runs `start`..`stop` of `pending`: each with its answered questions and one pending."""
    from django.utils import timezone

    from wfapp.models import Interrupt, InterruptStatus, RunStatus, Session

    per_run = answered // pending
    stop = pending if stop is None else stop
    now = timezone.now()
    for lo in range(start, stop, BATCH):
        hi = min(stop, lo + BATCH)
        runs = []
        asks = []
        for r in range(lo, hi):
            workflow = WORKFLOWS[r % len(WORKFLOWS)]
            last_seq = 3 * (per_run + 1) + 2
            runs.append(
                Session(
                    id=f"bench-{r:07d}",
                    workflow=workflow,
                    status=RunStatus.WAITING,
                    input={"employee": f"employee {r}", "amount": 100 + r % 5000},
                    last_seq=last_seq,
                    settled_seq=last_seq,
                )
            )
            for j in range(per_run + 1):
                is_pending = j == per_run
                asks.append(
                    Interrupt(
                        session_id=f"bench-{r:07d}",
                        interrupt_id=f"ask-{j}",
                        request_seq=3 * j + 2,
                        workflow=workflow,
                        node_path=f"{workflow}@1/review@{j + 1}",
                        message=f"Approve item {j} of run {r} for employee {r % 97}? Amount {100 + r % 5000}.",
                        payload={"employee": f"employee {r % 97}", "amount": 100 + r % 5000, "item": j},
                        response_schema=SCHEMAS[workflow],
                        status=InterruptStatus.PENDING if is_pending else InterruptStatus.ANSWERED,
                        answer=None if is_pending else {"approved": True, "comment": "ok"},
                        answered_by="" if is_pending else "seed",
                        answered_at=None if is_pending else now - timedelta(minutes=per_run - j),
                        answer_seq=None if is_pending else 3 * j + 3,
                    )
                )
        Session.objects.bulk_create(runs)
        Interrupt.objects.bulk_create(asks)


def _analyze() -> None:
    """Give PostgreSQL's planner statistics of the seeded tables, as autovacuum soon would on a
    live database: measured right after a bulk insert, a plan would sometimes rest on the empty
    tables' statistics (a page read 10,000 rows to sort them) and sometimes not, by the timing of
    autovacuum. SQLite keeps no statistics unless asked: nothing to do there."""
    from django.db import connection

    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE wfapp_session, wfapp_interrupt, wfapp_event")


def _user() -> Any:
    from django.contrib.auth.models import Permission, User

    user, _ = User.objects.get_or_create(username="bench-operator")
    user.user_permissions.add(
        Permission.objects.get(codename="answer_interrupt", content_type__app_label="wfapp")
    )
    return user


def _deep_cursor(pending: int) -> str:
    """The "Load more" cursor of the page in the middle of the pending list."""
    from wfapp.models import Interrupt, InterruptStatus
    from wfapp.web.queries import encode_cursor

    row = Interrupt.objects.filter(status=InterruptStatus.PENDING).order_by("created_at", "id")[pending // 2]
    return encode_cursor(row.created_at, row.pk)


def _requests(pending: int) -> dict[str, tuple[str, dict[str, str]]]:
    cursor = _deep_cursor(pending)
    return {
        "first": ("/", {}),
        "deep": (f"/?after={cursor}", {}),
        "deep_htmx": (f"/?after={cursor}", {"HX-Request": "true"}),
    }


def _get(client: Any, url: str, headers: dict[str, str]) -> tuple[float, Any]:
    t0 = time.perf_counter()
    response = client.get(url, headers=headers)
    elapsed = time.perf_counter() - t0
    if response.status_code != 200:
        raise RuntimeError(f"GET {url} answered {response.status_code}")
    return elapsed, response


def _count_queries(client: Any, pending: int) -> dict[str, int]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    counts = {}
    for name, (url, headers) in _requests(pending).items():
        with CaptureQueriesContext(connection) as ctx:
            _get(client, url, headers)
        counts[name] = len(ctx.captured_queries)
    return counts


def measure(pending: int, answered: int, samples: int, warmup: int = 5) -> dict[str, Any]:
    from django.test import Client

    from wfapp.models import Interrupt, InterruptStatus

    t0 = time.perf_counter()
    client = Client(HTTP_HOST="127.0.0.1")  # a host the embedded profile allows
    client.force_login(_user())
    tenth = max(1, pending // 10)
    seed(pending, answered, stop=tenth)
    small = _count_queries(client, tenth)
    seed(pending, answered, start=tenth)
    _analyze()
    seeded_s = time.perf_counter() - t0
    seeded_at = time.time()
    counts = _count_queries(client, pending)
    requests = _requests(pending)
    times: dict[str, list[float]] = {name: [] for name in requests}
    sizes: dict[str, int] = {}
    for _ in range(warmup):
        for url, headers in requests.values():
            _get(client, url, headers)
    # Interleave the pages so a burst of other work on the machine weighs on each alike.
    for _ in range(samples):
        for name, (url, headers) in requests.items():
            elapsed, response = _get(client, url, headers)
            times[name].append(elapsed)
            sizes[name] = len(response.content)
    # A check before the figures count: each page lists a full page of questions.
    listed = {}
    for name, (url, headers) in requests.items():
        listed[name] = client.get(url, headers=headers).content.decode().count('class="card inbox-item"')
    return {
        "pending": Interrupt.objects.filter(status=InterruptStatus.PENDING).count(),
        "answered": Interrupt.objects.filter(status=InterruptStatus.ANSWERED).count(),
        "seed_s": round(seeded_s, 2),
        "seeded_at": seeded_at,
        "samples": samples,
        "warmup": warmup,
        "pages": {
            name: {
                **percentiles(times[name]),
                "queries": counts[name],
                "queries_at_tenth": small[name],
                "bytes": sizes[name],
                "times_s": [round(t, 6) for t in times[name]],
            }
            for name in requests
        },
        "bounded_queries": counts == small,
        "listed": listed,
    }
