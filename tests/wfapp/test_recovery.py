"""Restart recovery: a serving process killed mid-node; the next one finishes the run.

Completed nodes are not executed again; only the node that was in flight runs again.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from asgiref.sync import async_to_sync

from tests.wfapp import flows
from tests.wfapp.helpers import embedded_only, subprocess_env
from wfapp.models import Event, Session
from wfapp.runs import starting

ROOT = Path(__file__).resolve().parents[2]

pytestmark = embedded_only(
    "a serving process that executes runs, killed or stopped; in workers mode servers execute "
    "none, and tests/scaled kills and stops worker processes instead"
)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(condition: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.05)


@pytest.fixture
def servers(test_dir: Path) -> Iterator[Callable[[], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []
    env = subprocess_env(WFAPP_TEST_DIR=str(test_dir), WFAPP_SWEEP_SECONDS="0.2", WFAPP_LEASE_SECONDS="30")

    def serve() -> subprocess.Popen[bytes]:
        command = [sys.executable, "manage.py", "serve", "--port", str(_free_port())]
        log = open(test_dir / f"serve-{len(started)}.log", "wb")
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        started.append(process)
        return process

    yield serve
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.parametrize("stop", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
def test_the_next_server_finishes_the_run_without_rerunning_completed_nodes(
    transactional_db: None,
    workflows: None,
    test_dir: Path,
    servers: Callable[[], subprocess.Popen[bytes]],
    stop: int,
) -> None:
    session_id, _ = async_to_sync(starting.create_run)("blocking", {"job": 7})
    first = servers()
    _wait(lambda: flows.count("blocking.wait") == 1, "the first server to block in the middle node")
    assert Session.objects.get(pk=session_id).status == "running"

    first.send_signal(stop)
    first.wait(timeout=60)
    assert flows.count("blocking.first") == 1

    second = servers()
    _wait(lambda: flows.count("blocking.wait") == 2, "the second server to take the run up")
    (test_dir / "release").touch()
    _wait(lambda: Session.objects.get(pk=session_id).status == "completed", "the run to complete")

    session = Session.objects.get(pk=session_id)
    assert session.output == {"done": {"job": 7}}
    assert (flows.count("blocking.first"), flows.count("blocking.wait"), flows.count("blocking.last")) == (
        1,
        2,
        1,
    )
    started = list(
        Event.objects.filter(session_id=session_id, kind="started").values_list("node_path", flat=True)
    )
    assert sum(path.endswith("/first@1") for path in started) == 1
    assert sum(path.endswith("/last@1") for path in started) == 1

    second.send_signal(signal.SIGTERM)
    assert second.wait(timeout=60) == 0
    assert Session.objects.get(pk=session_id).lease_owner is None
