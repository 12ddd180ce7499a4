"""Merge a later, partial run into results.json, beside the run's own rows.

    .venv/bin/python -m bench.merge bench/results.json later.json [--concurrency c.json] [--agents a.json] [--api a.json]
        [--scaled s.json] [--instructions i.json]
    .venv/bin/python -m bench.report bench/results.json

``bench/run.py --merge-into bench/results.json`` does both after a partial run.

For re-measuring a few workloads of our engine (and the floor, in the same run) without
running every peer again: the later rows go under ``"later"`` (RESULTS.md shows them in a
section of their own, with the run's command, date and load, and reads the next targets'
ratios to the floor from them, so each ratio still comes from one run); the peers' rows and
the first targets stay as measured. A ``bench.concurrency`` result goes under
``"concurrency"``, a ``bench.agents`` result under ``"agents"``, a ``bench.api`` result (one
database's, or ``run_all``'s) under ``"api"``, a ``bench.scaled`` one under ``"scaled"``, a
``bench.engine_callgrind`` one under ``"instructions"``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def merged(doc: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """``later`` beside ``doc``'s rows, and its ``bench.concurrency``, ``bench.api`` and
    ``bench.agents`` results if it has them."""
    doc = merge(doc, later)
    for key in ("concurrency", "api", "agents"):
        if later.get(key):
            doc[key] = later[key]
    return doc


def merge(doc: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    """Keep ``later``'s rows beside the run's own (the next targets are read from them)."""
    loads = [r[k] for r in later["configs"] for k in ("load_before", "load_after") if r.get(k) is not None]
    doc["later"] = {
        "command": portable(later["command"]),
        "generated_at": later["generated_at"],
        "commit": (later.get("git") or {}).get("commit", "?"),
        "load": f"{min(loads):.1f} to {max(loads):.1f}" if loads else "?",
        "configs": later["configs"],
    }
    return doc


def merge_api(api: dict[str, Any] | None, measured: dict[str, Any]) -> dict[str, Any]:
    """``doc["api"]`` with one database's ``bench.api`` result (or a whole ``run_all``) in it."""
    if "databases" in measured:
        return measured
    api = api or {"sizes": measured.get("sizes", {}), "databases": {}}
    api["databases"][measured["database"]] = measured
    if "sizes" in measured:
        api["sizes"] = measured["sizes"]
    return api


def portable(command: str) -> str:
    """The command without this machine's paths: ``--out`` keeps the file's name only."""
    words = command.split()
    return " ".join(Path(w).name if i and words[i - 1] == "--out" else w for i, w in enumerate(words))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path)
    p.add_argument("later", type=Path, nargs="?")
    p.add_argument("--concurrency", type=Path)
    p.add_argument("--agents", type=Path)
    p.add_argument("--api", type=Path, action="append", default=[], help="a bench.api result (repeatable)")
    p.add_argument("--scaled", type=Path, help="a bench.scaled result")
    p.add_argument("--instructions", type=Path, help="a bench.engine_callgrind result")
    args = p.parse_args()
    doc = json.loads(args.results.read_text())
    if args.later:
        doc = merged(doc, json.loads(args.later.read_text()))
    if args.concurrency:
        doc["concurrency"] = json.loads(args.concurrency.read_text())
    if args.agents:
        doc["agents"] = json.loads(args.agents.read_text())
    for path in args.api:
        doc["api"] = merge_api(doc.get("api"), json.loads(path.read_text()))
    if args.scaled:
        doc["scaled"] = json.loads(args.scaled.read_text())
    if args.instructions:
        doc["instructions"] = json.loads(args.instructions.read_text())
    args.results.write_text(json.dumps(doc, indent=1, default=repr) + "\n")


if __name__ == "__main__":
    main()
