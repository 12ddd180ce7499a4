"""Merge a later, partial run into results.json (its rows replace the same configurations).

    .venv/bin/python -m bench.merge bench/results.json later.json [--concurrency c.json]
    .venv/bin/python -m bench.report bench/results.json

For re-measuring a few workloads of our engine (and the floor, in the same run) without
running every peer again. The merged rows are named in RESULTS.md's header, with the later
run's command, date and load; a ``bench.concurrency`` result goes under ``"concurrency"``.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any


def merge(doc: dict[str, Any], later: dict[str, Any]) -> dict[str, Any]:
    key = lambda row: (row["engine"], row["workload"], row["store"])  # noqa: E731
    replaced = {key(row): row for row in later["configs"]}
    doc["configs"] = [replaced.pop(key(row), row) for row in doc["configs"]] + list(replaced.values())
    loads = [r[k] for r in later["configs"] for k in ("load_before", "load_after") if r.get(k) is not None]
    doc.setdefault("merged", []).append(
        {
            "command": later["command"],
            "generated_at": later["generated_at"],
            "commit": (later.get("git") or {}).get("commit", "?"),
            "load": f"{min(loads):.1f} to {max(loads):.1f}" if loads else "?",
            "configs": [" ".join(key(row)) for row in later["configs"]],
        }
    )
    return doc


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results", type=Path)
    p.add_argument("later", type=Path, nargs="?")
    p.add_argument("--concurrency", type=Path)
    args = p.parse_args()
    doc = json.loads(args.results.read_text())
    if args.later:
        doc = merge(doc, json.loads(args.later.read_text()))
    if args.concurrency:
        doc["concurrency"] = json.loads(args.concurrency.read_text())
    args.results.write_text(json.dumps(doc, indent=1, default=repr) + "\n")


if __name__ == "__main__":
    main()
