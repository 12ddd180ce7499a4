"""Fixtures for the Django side: real commits, a runtime in the test's loop, test workflows."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, Permission, User

from tests.wfapp.flows import PATHS
from wfapp.demos.expense_approval_people import GROUPS as DEMO_GROUPS
from wfapp.runs import runtime
from wfapp.runs.mode import workers_mode
from wfapp.runs.runtime import Runtime
from wfapp.store.events import close_connections
from wfapp.worker.process import running_worker

OPERATOR_PERMISSIONS = ["answer_interrupt", "start_run", "cancel_run", "retry_run"]


@pytest.fixture(autouse=True)
async def _close_thread_connections() -> AsyncIterator[None]:
    """Close the connections the stores' threads opened, so test databases can be dropped."""
    yield
    await close_connections()


@pytest.fixture
def test_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the test workflows count executions and look for their release files."""
    monkeypatch.setenv("WFAPP_TEST_DIR", str(tmp_path))
    return tmp_path


@pytest.fixture
def workflows(settings: pytest.FixtureRequest, test_dir: Path) -> Iterator[None]:
    """Register the test workflows next to the demos."""
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *PATHS.values()]
    yield


@pytest.fixture
async def engine_runtime(transactional_db: None, workflows: None) -> AsyncIterator[Runtime]:
    """The process's runtime, started in the test's event loop; in workers mode
    (``WFAPP_RUNTIME=workers``, PostgreSQL) the runtime of a procrastinate worker there."""
    if workers_mode():
        async with running_worker() as worker_runtime:
            yield worker_runtime
        return
    started = Runtime()
    runtime.install(started)
    await started.start()
    yield started
    await started.stop()
    runtime.install(None)


@pytest.fixture
def queue_worker(transactional_db: None, workflows: None) -> Iterator[None]:
    """In workers mode, a procrastinate worker in a thread of its own for the test's duration,
    for what hands runs to the workers: ``manage.py wf start|answer|retry`` (they wait for one)
    and ``serve`` processes (they execute nothing). In embedded mode it does nothing: the CLI
    and the servers execute runs themselves."""
    if not workers_mode():
        yield
        return
    up = threading.Event()
    held: dict[str, Any] = {}

    async def serve() -> None:
        held["loop"], held["stop"] = asyncio.get_running_loop(), asyncio.Event()
        try:
            async with running_worker():
                up.set()
                await held["stop"].wait()
        finally:
            await close_connections()
            up.set()

    thread = threading.Thread(target=asyncio.run, args=(serve(),), name="test-worker", daemon=True)
    thread.start()
    assert up.wait(30), "the test worker did not start"
    try:
        yield
    finally:
        held["loop"].call_soon_threadsafe(held["stop"].set)
        thread.join(30)
        assert not thread.is_alive(), "the test worker did not stop"


def _user(username: str, *, may_answer: bool) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username)
    if may_answer:  # an operator: answers, starts, cancels and retries
        user.user_permissions.add(
            *Permission.objects.filter(codename__in=OPERATOR_PERMISSIONS, content_type__app_label="wfapp")
        )
        user.groups.add(*Group.objects.filter(name__in=DEMO_GROUPS))  # the expense demo assigns to these
    return User.objects.get(pk=user.pk)  # fresh: no stale permission cache


@pytest.fixture
def alice(transactional_db: None) -> User:
    return _user("alice", may_answer=True)


@pytest.fixture
def bob(transactional_db: None) -> User:
    return _user("bob", may_answer=True)


@pytest.fixture
def mallory(transactional_db: None) -> User:
    return _user("mallory", may_answer=False)
