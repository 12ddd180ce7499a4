"""Under concurrent load a serving process holds at most ``WFAPP_DB_POOL_SIZE`` PostgreSQL connections.

A real ``manage.py serve`` (Daphne, one thread per request, the runtime's store threads) takes
60 concurrent page loads and 60 concurrent answers whose runs then execute in its runtime,
while the test counts the server's connections in ``pg_stat_activity`` (the server's
connections carry their own ``application_name``). No request may fail for want of one.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psycopg
import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client

from engine import Runner
from tests.wfapp.helpers import subprocess_env
from wfapp.models import Interrupt, InterruptStatus, Session
from wfapp.registry import get_workflow
from wfapp.runs import starting
from wfapp.settings.environment import database
from wfapp.store.events import DjangoEventStore

ROOT = Path(__file__).resolve().parents[2]
POOL = 6
CONCURRENT = 60


@pytest.fixture
def postgresql(transactional_db: None) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL server connections; .ci/run reruns tests/wfapp on PostgreSQL")


def _free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class Peak:
    """Samples the server's connection count in a thread of its own; keeps the highest."""

    def __init__(self, application_name: str) -> None:
        params = connection.get_connection_params()
        self.conn = psycopg.connect(
            dbname=params["dbname"],
            user=params.get("user"),
            password=params.get("password"),
            host=params.get("host"),
            port=params.get("port"),
            autocommit=True,
        )
        self.name = application_name
        self.highest = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def count(self) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s", [self.name]
        ).fetchone()
        return int(row[0]) if row else 0

    def _sample(self) -> None:
        while not self._stop.is_set():
            self.highest = max(self.highest, self.count())
            time.sleep(0.01)

    def __enter__(self) -> Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.highest = max(self.highest, self.count())
        self.conn.close()


@pytest.fixture
def server(postgresql: None, workflows: None, test_dir: Path) -> Iterator[tuple[str, str]]:
    """A serving process with a pool of ``POOL``; yields its URL and its application_name."""
    name = f"wfapp-pool-test-{secrets.token_hex(4)}"
    port = _free_port()
    env = subprocess_env(
        WFAPP_TEST_DIR=str(test_dir),
        WFAPP_DB_POOL_SIZE=str(POOL),
        PGAPPNAME=name,
        SECRET_KEY=settings.SECRET_KEY,  # the sessions made here are valid there
    )
    log = (test_dir / "serve.log").open("wb")
    command = [sys.executable, "manage.py", "serve", "--port", str(port)]
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/login/", timeout=5):
                    break
            except (urllib.error.URLError, ConnectionError):
                assert process.poll() is None, (test_dir / "serve.log").read_text()
                assert time.monotonic() < deadline, "the server did not start"
                time.sleep(0.2)
        yield url, name
    finally:
        process.terminate()
        # A request still waiting for a connection of the (deliberately small) pool holds the
        # shutdown up to the pool's 30 s timeout: on a loaded machine that went past a 30 s wait.
        process.wait(timeout=90)
        log.close()


def _request(url: str, cookies: str, data: bytes | None = None, token: str = "") -> int:
    headers = {"Cookie": cookies, "HX-Request": "true"}
    if data is not None:
        headers.update({"X-CSRFToken": token, "Content-Type": "application/x-www-form-urlencoded"})
    request = urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def _all_at_once(calls: list[Callable[[], int]]) -> list[int]:
    with ThreadPoolExecutor(max_workers=len(calls)) as threads:
        return list(threads.map(lambda call: call(), calls))


def test_connections_stay_within_the_pool_under_concurrent_pages_and_answers(
    server: tuple[str, str], alice: User, queue_worker: None
) -> None:
    url, name = server
    runs = []
    for n in range(CONCURRENT):
        session_id, _ = async_to_sync(starting.create_run)("approval", {"n": n})
        async_to_sync(Runner(get_workflow("approval"), store=DjangoEventStore()).advance)(session_id)
        runs.append(session_id)
    asks = list(Interrupt.objects.filter(session_id__in=runs, status=InterruptStatus.PENDING))
    assert len(asks) == CONCURRENT
    client = Client()
    client.force_login(alice)
    token = secrets.token_hex(16)  # a CSRF secret of our own: cookie and header agree
    cookies = f"sessionid={client.cookies['sessionid'].value}; csrftoken={token}"

    with Peak(name) as peak:
        pages = _all_at_once([lambda: _request(url + "/", cookies) for _ in range(CONCURRENT)])
        answers = _all_at_once(
            [
                lambda pk=ask.pk: _request(
                    f"{url}/interrupts/{pk}/answer/", cookies, b"f.approved=true", token
                )
                for ask in asks
            ]
        )
        assert pages == [200] * CONCURRENT
        assert answers == [200] * CONCURRENT
        deadline = time.monotonic() + 60  # the runtime finishes the answered runs meanwhile
        while left := Session.objects.filter(pk__in=runs).exclude(status="completed").count():
            assert time.monotonic() < deadline, f"{left} answered runs did not complete"
            time.sleep(0.1)

    assert 0 < peak.highest <= POOL, f"the server held {peak.highest} connections (pool of {POOL})"


def test_the_pool_size_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://u:p@db.internal:5433/wf")
    monkeypatch.setenv("WFAPP_DB_POOL_SIZE", "7")
    config = database(tmp_path / "unused")
    assert config["CONN_MAX_AGE"] == 0  # pooling replaces persistent connections
    assert config["OPTIONS"]["pool"]["max_size"] == 6  # the seventh: the group commit's own
    monkeypatch.setenv("WFAPP_DB_POOL_SIZE", "0")  # no pool: each request closes its connection
    config = database(tmp_path / "unused")
    assert config["CONN_MAX_AGE"] == 0 and "pool" not in config.get("OPTIONS", {})


async def test_the_notification_job_gives_its_connection_back(postgresql: None) -> None:
    """The periodic notification job runs in a thread of the loop's executor, which outlives no
    loop: a connection it kept would be held out of the pool for good (tests/wfapp once ran out)."""
    from wfapp.worker.notify_tasks import notify

    pool = connection.pool
    assert pool is not None
    before = pool.get_stats().get("pool_size", 0) - pool.get_stats().get("pool_available", 0)
    for _ in range(3):
        await notify.func(0)
    stats = pool.get_stats()
    assert stats.get("pool_size", 0) - stats.get("pool_available", 0) == before


@pytest.mark.parametrize(("pool_size", "warned"), [("5", True), ("9", True), (None, False), ("10", False)])
def test_check_warns_when_the_pool_leaves_too_few_connections_beside_the_store_threads(
    pool_size: str | None, warned: bool
) -> None:
    """Each of the 4 store threads and asgiref's thread keep a connection for the process's life:
    a pool barely larger leaves requests and live renders waiting until its timeout fails them."""
    env = subprocess_env(DATABASE_URL="postgres://postgres@127.0.0.1:5432/unused", WFAPP_STORE_THREADS="4")
    env.pop("WFAPP_DB_POOL_SIZE", None)
    if pool_size is not None:
        env["WFAPP_DB_POOL_SIZE"] = pool_size
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--tag", "wfapp"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    output = done.stdout + done.stderr
    assert ("wfapp.W010" in output) is warned, output
    if warned:
        assert f"holds {int(pool_size or 0) - 1} connections and 5 of them stay" in output
        assert "Set WFAPP_DB_POOL_SIZE to at least 10" in output
