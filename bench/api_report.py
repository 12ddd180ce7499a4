"""RESULTS.md's "JSON API" section, from ``doc["api"]`` (see ``bench/api.py``)."""

from __future__ import annotations

from typing import Any

from bench.dashboard_report import NAMES

METHOD = (
    "Against `manage.py serve` (Daphne and the embedded runtime in one process, as `make run`) "
    "on a fresh database, as a client system uses it, with an API token and keep-alive "
    "connections; the client is another process on the same 2 cores. Answer-to-completion: a "
    "run with one yes/no question and one trivial step after it; the client follows the run's "
    "`runs/{{id}}/stream`; from before `POST interrupts/{{id}}/answer` to the arrival of the "
    "stream's `event: end`. Event stream: a run that, once answered, commits one state event "
    "every {pause} ms; for each, the arrival of its SSE frame minus the event's `timestamp` "
    "(taken just before its commit: an upper bound that includes the commit). "
    "`GET runs/{{id}}`: {readers} threads, each on its own connection, for {seconds} s. "
    "Targets: the dashboard's (the same figures for the pages)."
)


def _ms(figure: dict[str, Any], key: str) -> str:
    value = figure.get(key)
    return "-" if value is None else f"{value * 1e3:.1f} ms"


def _row(label: str, figure: dict[str, Any], target: str, notes: str) -> str:
    cells = [label, str(figure.get("n", "-")), _ms(figure, "p50_s"), _ms(figure, "p95_s")]
    return "| " + " | ".join([*cells, _ms(figure, "max_s"), target, notes]) + " |"


def _database(db: str, row: dict[str, Any]) -> list[str]:
    name = NAMES.get(db, db)
    if row.get("error"):
        return [f"### {name}", "", f"FAILED: {row['error']}", ""]
    answer, stream, reads = row["answer"], row["stream"], row["get_run"]
    measured = f"Measured in {row['duration_s']:.0f} s" if "duration_s" in row else "Measured"
    if "load_before" in row:
        measured += (
            f", the load average going from {row['load_before']:.1f} to {row['load_after']:.1f} (2 cores)"
        )
    return [
        f"### {name}",
        "",
        "| figure | samples | p50 | p95 | max | target (p95) | notes |",
        "|---|---|---|---|---|---|---|",
        _row("Answer POST to the stream's end", answer["to_completion"], "< 150 ms", "the run completes"),
        _row("Answer POST until its response", answer["answer_post"], "", "200: the turn settled here"),
        _row(
            "Event, timestamp to SSE frame (commit included)",
            stream["from_timestamp"],
            "< 50 ms",
            f"{stream['events']} events, {stream['pause_ms']} ms apart",
        ),
        "",
        f"`GET runs/{{id}}`: {reads['per_second']:.0f} requests/s ({reads['requests']} in "
        f"{reads['seconds']} s from {reads['readers']} connections). {measured}.",
        "",
    ]


def api_section(api: dict[str, Any] | None) -> list[str]:
    if not api:
        return ["## JSON API", "", "Not measured in this run.", ""]
    sizes = api.get("sizes", {})
    method = METHOD.format(
        pause=sizes.get("push_pause_ms", "?"),
        readers=sizes.get("readers", "?"),
        seconds=sizes.get("read_seconds", "?"),
    )
    out = ["## JSON API", "", method, ""]
    for db, row in api["databases"].items():
        out += _database(db, row)
    return out
