"""Fixtures for the scaled mode: a PostgreSQL database of its own per test, real worker and web
processes (``manage.py wf worker``, ``manage.py serve``), and SQL to look at what they did.

The PostgreSQL server comes from ``WFAPP_TEST_POSTGRES`` (an admin URL, default: the local
server as ``postgres``), Redis from ``REDIS_URL``. The database is migrated once per session
and copied (``CREATE DATABASE ... TEMPLATE``) for each test.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.scaled.flows import PATHS

ROOT = Path(__file__).resolve().parents[2]
ADMIN_URL = os.environ.get("WFAPP_TEST_POSTGRES", "postgres://postgres@127.0.0.1:5432/postgres")
LEASE_SECONDS = "6"
SWEEP_SECONDS = "1"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def database_url(name: str, admin: str = ADMIN_URL) -> str:
    return admin.rsplit("/", 1)[0] + "/" + name


def _admin(sql: str, admin: str = ADMIN_URL) -> None:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(sql)  # type: ignore[arg-type]


def base_env(url: str, test_dir: Path, **extra: str) -> dict[str, str]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "tests.scaled.settings",
        "DATABASE_URL": url,
        "WFAPP_RUNTIME": "workers",
        "WFAPP_EXTRA_WORKFLOWS": ",".join(PATHS.values()),
        "WFAPP_TEST_DIR": str(test_dir),
        "WFAPP_LEASE_SECONDS": LEASE_SECONDS,
        "WFAPP_SWEEP_SECONDS": SWEEP_SECONDS,
        "WFAPP_WORKER_GRACE_SECONDS": "5",
        "PYTHONUNBUFFERED": "1",
    }
    # Each process's PostgreSQL pool as it was before the default grew to 20: a cluster of web and
    # worker processes at 20 each, beside another test module's cluster, went past the server's
    # 100 connections ("too many clients already").
    env.setdefault("WFAPP_DB_POOL_SIZE", "10")
    env.update(extra)
    return env


@pytest.fixture(scope="session")
def template_db() -> Iterator[str]:
    """A migrated database to copy for each test."""
    name = f"wfapp_scaled_tmpl_{os.getpid()}"
    _admin(f"DROP DATABASE IF EXISTS {name}")
    _admin(f"CREATE DATABASE {name}")
    env = base_env(database_url(name), Path(os.devnull))
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    yield name
    _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@dataclass
class Cluster:
    """The processes of one test and the database they share."""

    url: str
    test_dir: Path
    env: dict[str, str]
    processes: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def worker(self, concurrency: int = 10, **extra: str) -> subprocess.Popen[bytes]:
        log = open(self.test_dir / f"worker-{len(self.processes)}.log", "wb")
        process = subprocess.Popen(
            [sys.executable, "manage.py", "wf", "worker", "--concurrency", str(concurrency)],
            cwd=ROOT,
            env={**self.env, **extra},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process

    def serve(self) -> tuple[subprocess.Popen[bytes], str]:
        port = free_port()
        log = open(self.test_dir / f"serve-{port}.log", "wb")
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port)],
            cwd=ROOT,
            env=self.env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        self.processes.append(process)
        return process, f"http://127.0.0.1:{port}"

    def drive(self, *args: str) -> Any:
        """Run the client process (``tests.scaled.driver``) and return what it printed."""
        done = subprocess.run(
            [sys.executable, "-m", "tests.scaled.driver", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            check=True,
        )
        return json.loads(done.stdout.decode().strip().splitlines()[-1])

    def manage(self, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
        """Run a management command with this cluster's environment."""
        return subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env={**self.env, **extra},
            capture_output=True,
            text=True,
            timeout=120,
        )

    def sql(self, query: str, *params: Any) -> list[tuple[Any, ...]]:
        with psycopg.connect(self.url, autocommit=True) as conn:
            return list(conn.execute(query, params).fetchall())  # type: ignore[arg-type]

    def wait_for(self, condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting for {what}\n{self.logs()}")
            time.sleep(0.1)

    def logs(self) -> str:
        return "\n".join(
            f"--- {path.name}\n{path.read_text(errors='replace')[-3000:]}"
            for path in self.test_dir.glob("*.log")
        )

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.send_signal(signal.SIGCONT)
                process.kill()
        for process in self.processes:
            process.wait(timeout=30)


@pytest.fixture
def cluster(template_db: str, tmp_path: Path) -> Iterator[Cluster]:
    name = f"wfapp_scaled_{os.getpid()}_{time.monotonic_ns() % 10**9}"
    _admin(f"CREATE DATABASE {name} TEMPLATE {template_db}")
    url = database_url(name)
    the_cluster = Cluster(url=url, test_dir=tmp_path, env=base_env(url, tmp_path))
    try:
        yield the_cluster
    finally:
        the_cluster.stop_all()
        _admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def check_logs(cluster: Cluster, session_ids: list[str]) -> None:
    """Every run completed, its log gap-free, no node completed twice."""
    rows = cluster.sql(
        "SELECT s.id, s.status, s.last_seq, count(e.seq), coalesce(max(e.seq), 0) FROM wfapp_session s "
        "LEFT JOIN wfapp_event e ON e.session_id = s.id WHERE s.id = ANY(%s) GROUP BY s.id",
        session_ids,
    )
    assert len(rows) == len(session_ids)
    not_done = [(run, status) for run, status, *_ in rows if status != "completed"]
    assert not not_done, not_done
    gaps = [row for row in rows if not (row[2] == row[3] == row[4])]
    assert not gaps, f"logs with gaps (run, status, last_seq, events, max seq): {gaps}"
    # The workflow's own completion too: a worker killed between it and the final status
    # leaves the next worker to write the status alone.
    twice = cluster.sql(
        "SELECT session_id, node_path, count(*) FROM wfapp_event WHERE kind = 'completed' "
        "AND session_id = ANY(%s) GROUP BY 1, 2 HAVING count(*) > 1",
        session_ids,
    )
    assert not twice, f"nodes completed twice: {twice}"
