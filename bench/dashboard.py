"""The dashboard figures of BENCHMARKS.md: inbox time, event push latency, answer-to-completion.

    .venv/bin/python -m bench.dashboard --out dashboard.json [--tiny]

Measures on SQLite (the embedded profile), and on PostgreSQL too when ``DATABASE_URL`` is
set, each in a subprocess of its own on a fresh data directory (``WFAPP_DATA_DIR``) and, for
PostgreSQL, a database of its own that is created and dropped. In each: the inbox through
Django's test client (``dashboard_inbox``), then a real server (``manage.py serve``) on the
same database with a real websocket client (``dashboard_live``). ``bench/run.py`` calls this
and puts the result under ``"dashboard"`` in results.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.one_database import in_subprocess, write_result  # noqa: E402

FULL: dict[str, int] = {
    "pending": 10_000,
    "answered": 100_000,
    "inbox_samples": 50,
    "push_events": 200,
    "push_pause_ms": 20,
    "answers": 30,
    "answer_warmup": 2,
}
TINY: dict[str, int] = {
    "pending": 200,
    "answered": 2_000,
    "inbox_samples": 10,
    "push_events": 20,
    "push_pause_ms": 20,
    "answers": 5,
    "answer_warmup": 1,
}
TARGETS_S = {"inbox": 0.100, "push": 0.050, "answer": 0.150}  # p95, BENCHMARKS.md


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def databases() -> list[str]:
    pg = os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://"))
    return ["sqlite", "postgres"] if pg else ["sqlite"]


def _operator(password: str) -> str:
    from django.contrib.auth.models import Permission, User

    user, _ = User.objects.get_or_create(username="bench-operator")
    user.set_password(password)
    user.save()
    user.user_permissions.add(  # it starts runs from the forms and answers them
        *Permission.objects.filter(
            codename__in=["answer_interrupt", "start_run"], content_type__app_label="wfapp"
        )
    )
    return user.get_username()


def measure_one(database: str, size: dict[str, int]) -> dict[str, Any]:
    """Everything on one database, in this process (Django is set up here, once)."""
    from bench import dashboard_inbox, dashboard_live
    from bench.dashboard_client import database_url, environ_for_server, serving
    from bench.workloads.ours import setup_django

    data_dir = Path(os.environ.get("WFAPP_DATA_DIR") or tempfile.mkdtemp(prefix="wfdash-"))
    setup_django(f"django-{database}", str(data_dir))  # a fresh database, migrated
    password = secrets.token_urlsafe(16)
    username = _operator(password)
    from django.db import connection

    log(f"  {database}: inbox, {size['pending']:,} pending among {size['answered']:,} answered")
    inbox = dashboard_inbox.measure(size["pending"], size["answered"], size["inbox_samples"])
    server_env = environ_for_server(data_dir, database_url())
    connection.close()
    # The serving process rings for runs other processes changed in the last seconds (with
    # the in-memory channel layer): the seeded runs must be older than that look-back, or
    # the first measurements would meet a doorbell for each of them.
    time.sleep(max(0.0, inbox["seeded_at"] + 4.0 - time.time()))
    log(f"  {database}: push latency and answer-to-completion against manage.py serve")
    with serving(data_dir, server_env) as server:
        live = asyncio.run(dashboard_live.measure(server, username, password, size))
    return {"database": database, "vendor": connection.vendor, "inbox": inbox, **live}


def run_all(size: dict[str, int], tiny: bool, timeout: int) -> dict[str, Any]:
    """Each database in a subprocess of its own, on a fresh data directory."""
    doc: dict[str, Any] = {"mode": "tiny" if tiny else "full", "sizes": size, "targets_s": TARGETS_S}
    doc["databases"] = {}
    for database in databases():
        t0 = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="wfdash-") as data_dir:
            out = Path(data_dir) / "result.json"
            cmd = [sys.executable, "-m", "bench.dashboard", "--db", database, "--out", str(out)]
            env = {
                **os.environ,
                "WFAPP_DATA_DIR": data_dir,
                "DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded",
                "PYTHONPATH": str(ROOT),
            }
            env.pop("REDIS_URL", None)
            result = in_subprocess([*cmd, *(["--tiny"] if tiny else [])], ROOT, env, out, timeout)
        result["duration_s"] = round(time.perf_counter() - t0, 1)
        doc["databases"][database] = result
        shown = result.get("error") or "done"
        log(f"dashboard on {database}: {shown} ({result['duration_s']:.0f} s)")
    return doc


SOURCES = ("bench", "engine", "wfapp", "templates", "static", "manage.py")


def from_head(argv: list[str], timeout: int) -> int:
    """Run this command again from a tree of the code as committed at HEAD.

    Others edit the working tree while a long benchmark runs; a half-saved module would break
    the server. ``git archive`` gives one consistent version of everything the server needs.
    """
    tree = Path(tempfile.mkdtemp(prefix="wfdash-src-"))
    try:
        archive = subprocess.run(
            ["git", "archive", "HEAD", *SOURCES], cwd=ROOT, capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
        env = {**os.environ, "PYTHONPATH": str(tree)}
        cmd = [sys.executable, "-m", "bench.dashboard", *argv]
        return subprocess.run(cmd, cwd=tree, env=env, timeout=timeout * 2).returncode
    finally:
        shutil.rmtree(tree, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, required=True, help="where to write the JSON result")
    p.add_argument("--tiny", action="store_true", help="small sizes, seconds (CI)")
    p.add_argument("--db", choices=("sqlite", "postgres"), help="measure on this database, in this process")
    p.add_argument("--timeout", type=int, default=1200, help="seconds per database")
    p.add_argument(
        "--source",
        choices=("worktree", "head"),
        default="worktree",
        help="measure the code as on disk (default) or as committed at HEAD",
    )
    args = p.parse_args(argv)
    if args.source == "head" and not args.db:
        passed = [a for a in (argv if argv is not None else sys.argv[1:]) if a not in ("--source", "head")]
        return from_head([*passed, "--out", str(args.out.resolve())], args.timeout)
    size = TINY if args.tiny else FULL
    if args.db:
        return write_result(args.out, args.db, lambda: measure_one(args.db, size))
    doc = run_all(size, args.tiny, args.timeout)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    return 1 if any("error" in r for r in doc["databases"].values()) else 0


if __name__ == "__main__":
    sys.exit(main())
