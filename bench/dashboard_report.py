"""RESULTS.md's "Dashboard" section, from ``doc["dashboard"]`` (see ``bench/dashboard.py``)."""

from __future__ import annotations

from typing import Any

NAMES = {"sqlite": "SQLite", "postgres": "PostgreSQL"}

METHOD = (
    "Inbox: runs and their inbox rows seeded in bulk (each run has ten answered questions and one "
    "pending, across the demo workflows' names and schemas), then the real view timed through "
    "Django's test client (middleware, session, authentication, permission, template) as a "
    "logged-in operator holding `wfapp.answer_interrupt`, after a warm-up, the pages interleaved; "
    "the deep page is the one in the middle of the pending list, reached with its keyset cursor, "
    'as a full page and as the htmx fragment "Load more" fetches. Queries counted with '
    "`CaptureQueriesContext` with a tenth of the data and with all of it. "
    "Live figures: `manage.py serve` (Daphne and the embedded runtime in one process, as "
    "`make run`) on the same database, driven like a browser: login form, start forms, the run "
    "page's websocket with its hello, answers posted from the form that arrived in a frame with "
    "htmx's headers. Event push: a run that, once a go-ahead question is answered, commits one "
    "state event every {pause} ms; for each, the arrival of the first frame carrying it "
    "(`data-seq`) minus the event's `timestamp` (set when the event is created, just before its "
    "commit: an upper bound that includes the commit; the target is checked on it) and minus the "
    "moment the server was about to ring that commit's doorbell (the commit done). "
    "Answer-to-completion: a run with one yes/no question and one trivial step after it; from "
    "before the answer POST to the arrival of the frame carrying the run's completion event. "
    "Server and client share the machine's clock; the client is another process on the same "
    "2 cores."
)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:.1f} ms"


def _row(label: str, figure: dict[str, Any] | None, target: str, extra: str = "") -> list[str]:
    f = figure or {}
    return [
        label,
        str(f.get("n", "-")),
        _ms(f.get("p50_s")),
        _ms(f.get("p95_s")),
        _ms(f.get("max_s")),
        target,
        extra,
    ]


def _badge(answer: dict[str, Any]) -> str:
    missed = answer.get("status_badge_missed")
    if not missed:
        return ""
    return (
        f"; on {missed} of {answer['samples']} runs the completion event reached the page but the "
        "status badge still said running (the head was rendered from the run's row read before "
        "the events)"
    )


def _table(rows: list[list[str]]) -> list[str]:
    head = ["figure", "samples", "p50", "p95", "max", "target (p95)", "notes"]
    return [
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def _database(db: str, row: dict[str, Any]) -> list[str]:
    name = NAMES.get(db, db)
    if row.get("error"):
        return [f"### {name}", "", f"FAILED: {row['error']}", ""]
    inbox, push, answer = row["inbox"], row["push"], row["answer"]
    pages = inbox["pages"]
    size = f"{inbox['pending']:,} pending among {inbox['answered']:,} answered"
    listed = inbox.get("listed", {})

    def page_note(key: str) -> str:
        p = pages[key]
        return f"{p['queries']} queries ({p['queries_at_tenth']} at a tenth of the data), {listed.get(key, '?')} questions listed, {p['bytes']:,} bytes"

    rows = [
        _row(f"Inbox, first page ({size})", pages["first"], "< 100 ms", page_note("first")),
        _row("Inbox, deep page (full page)", pages["deep"], "< 100 ms", page_note("deep")),
        _row(
            'Inbox, deep page ("Load more" fragment)', pages["deep_htmx"], "< 100 ms", page_note("deep_htmx")
        ),
        _row(
            "Event push, event timestamp to frame (upper bound, commit included)",
            push["from_timestamp"],
            "< 50 ms",
            f"{push['events']} events, one commit each, {push['pause_ms']} ms apart; they came in {push['frames']} frames",
        ),
        _row(
            "Event push, commit done (doorbell) to frame",
            push["from_commit"],
            "",
            f"{push['commits']} commits seen",
        ),
        _row(
            "Answer POST to the completion frame",
            answer["to_completion"],
            "< 150 ms",
            f"after {answer['warmup']} warm-up run(s)" + _badge(answer),
        ),
        _row("Answer POST until its response", answer["answer_post"], "", "the answer's own request"),
    ]
    return [
        f"### {name}",
        "",
        *_table(rows),
        "",
        f"Seeding took {inbox['seed_s']:.0f} s; measured in {row.get('duration_s', 0):.0f} s.",
        "",
    ]


def dashboard_section(dashboard: dict[str, Any] | None) -> list[str]:
    if not dashboard:
        return ["## Dashboard", "", "Not measured in this run.", ""]
    pause = dashboard.get("sizes", {}).get("push_pause_ms", "?")
    out = ["## Dashboard", "", METHOD.format(pause=pause), ""]
    for db, row in dashboard["databases"].items():
        out += _database(db, row)
    return out
