"""A database restart while workers run: each worker recovers or exits non-zero, no run strands.

The test runs a PostgreSQL server of its own (``initdb`` in a temporary directory) so that it
can restart it, and plays the supervisor: a worker that exits is started again.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.scaled.conftest import ROOT, Cluster, base_env, check_logs, free_port


def _as_postgres(command: list[str]) -> list[str]:
    return ["runuser", "-u", "postgres", "--", *command] if os.geteuid() == 0 else command


def _pg_bin(name: str) -> str:
    found = shutil.which(name) or next(iter(sorted(Path("/usr/lib/postgresql").glob(f"*/bin/{name}"))), None)
    assert found, f"{name} (PostgreSQL's server programs) is needed for this test"
    return str(found)


@pytest.fixture
def own_server() -> Iterator[tuple[str, Path, int]]:
    # Outside pytest's temporary tree, which only its owner may enter: the server runs as postgres.
    home = Path(tempfile.mkdtemp(prefix="wfapp-pg-"))
    data = home / "pgdata"
    data.mkdir()
    if os.geteuid() == 0:
        shutil.chown(home, "postgres")
        shutil.chown(data, "postgres")
    subprocess.run(
        _as_postgres([_pg_bin("initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]),
        check=True,
        capture_output=True,
    )
    port = free_port()
    ctl = [_pg_bin("pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-w"]
    options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
    subprocess.run(_as_postgres([*ctl, "-o", options, "start"]), check=True, capture_output=True)
    try:
        yield f"postgres://postgres@127.0.0.1:{port}/postgres", data, port
    finally:
        subprocess.run(_as_postgres([*ctl, "-m", "immediate", "stop"]), capture_output=True)
        shutil.rmtree(home, ignore_errors=True)


def test_workers_recover_or_exit_non_zero_across_a_database_restart(
    own_server: tuple[str, Path, int], tmp_path: Path
) -> None:
    url, data, port = own_server
    env = base_env(url, tmp_path, WFAPP_WORKER_DB_TIMEOUT="4")
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    cluster = Cluster(url=url, test_dir=tmp_path, env=env)
    try:
        workers = [cluster.worker(concurrency=10) for _ in range(2)]
        runs: list[str] = cluster.drive("start", "chain", "40", '{"pause": 0.3}')
        cluster.wait_for(
            lambda: cluster.sql("SELECT count(*) FROM wfapp_session WHERE lease_owner IS NOT NULL")[0][0] > 0,
            "the workers to take runs",
        )
        ctl = [_pg_bin("pg_ctl"), "-D", str(data), "-l", str(data / "server.log"), "-w"]
        subprocess.run(_as_postgres([*ctl, "-m", "fast", "stop"]), check=True, capture_output=True)
        time.sleep(6)  # longer than WFAPP_WORKER_DB_TIMEOUT: the workers notice
        options = f"-p {port} -k {data} -c listen_addresses=127.0.0.1 -c fsync=off"
        subprocess.run(_as_postgres([*ctl, "-o", options, "start"]), check=True, capture_output=True)
        exits: list[int] = []
        deadline = time.monotonic() + 120
        while cluster.sql(
            "SELECT count(*) FROM wfapp_session WHERE status != 'completed' OR lease_owner IS NOT NULL"
        )[0][0]:
            if time.monotonic() > deadline:
                stranded = cluster.sql(
                    "SELECT id, status, lease_owner, last_seq, settled_seq, error FROM wfapp_session "
                    "WHERE status != 'completed' OR lease_owner IS NOT NULL"
                )
                raise AssertionError(f"runs stranded: {stranded}; worker exits {exits}\n{cluster.logs()}")
            for worker in list(workers):
                if worker.poll() is not None:  # the supervisor's part: restart what exited
                    exits.append(worker.returncode)
                    workers.remove(worker)
                    workers.append(cluster.worker(concurrency=10))
            time.sleep(0.2)
        assert all(code != 0 for code in exits), exits
        check_logs(cluster, runs)
        print(f"\ndatabase restart: worker exit statuses {exits}; every run completed")
    finally:
        cluster.stop_all()
