"""What a turn is compared by: the shape both sides report, as plain JSON."""

from __future__ import annotations

import json
from typing import Any


def plain(value: Any) -> Any:
    """A value as JSON would carry it (models dumped, tuples as lists, keys as strings)."""
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        value = dump(mode="json")
    return json.loads(json.dumps(value, default=repr, sort_keys=True))


def turn(
    *,
    status: str,
    output: Any,
    pending: list[str],
    asked: list[str],
    state: dict[str, Any],
    outputs: dict[str, Any],
    routes: list[tuple[str, Any]],
    calls: dict[str, int],
    error: str | None,
) -> dict[str, Any]:
    """One turn's observation: what a workflow author can see after it."""
    return {
        "status": status,
        "output": plain(output) if status == "completed" else None,
        "pending": sorted(pending),
        "asked": sorted(set(asked)),
        "state": plain({k: v for k, v in state.items() if not k.startswith("temp:")}),
        "outputs": plain(outputs),
        "routes": sorted(plain([[path, route] for path, route in routes]), key=json.dumps),
        "calls": dict(sorted(calls.items())),
        "error": error,
    }


def build_error(exc: Exception) -> dict[str, str]:
    """A workflow that could not be built: what an author's ``except`` would catch it as."""
    return {"build_error": "ValueError" if isinstance(exc, ValueError) else type(exc).__name__}
