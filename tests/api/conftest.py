"""Fixtures for the API: users with and without the answer permission, their tokens, clients."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.contrib.auth.models import User
from django.db import connection, connections
from django.test import AsyncClient

from tests.web.conftest import browser  # noqa: F401  (the dashboard's Chromium, for the docs page)
from tests.wfapp.conftest import (  # noqa: F401  (fixtures shared with the wfapp tests)
    _close_thread_connections,
    _user,
    alice,
    bob,
    engine_runtime,
    mallory,
    test_dir,
    workflows,
)
from tests.wfapp.helpers import settled
from wfapp.api import tokens
from wfapp.models import Event

EXPENSE = {"employee": "Ann", "amount": "1500", "category": "travel", "description": "Flights to Oslo"}


@contextlib.asynccontextmanager
async def request_thread() -> AsyncIterator[None]:
    """Serve a test client's request as Django's ASGI handler does: in a thread-sensitive
    context of its own (otherwise a sync middleware holds the one shared thread while the view
    waits, and the runtime's database calls queue behind it), whose thread's database
    connection is closed at the end. The test client keeps connections open after a request,
    and a thread that ends holding one keeps its PostgreSQL pool slot for good: enough such
    requests and the process's pool (``WFAPP_DB_POOL_SIZE``) is empty, so later tests in the
    same process wait 30 s for a connection and fail."""
    async with ThreadSensitiveContext():
        try:
            yield
        finally:
            await sync_to_async(connections.close_all)()  # this context's thread's connection


class Api:
    """An async client that sends one user's bearer token (or none) and JSON bodies."""

    def __init__(self, token: str | None) -> None:
        self.client = AsyncClient()
        self.headers = {"Authorization": f"Bearer {token}"} if token else {}

    async def get(self, path: str, **headers: str) -> Any:
        async with request_thread():
            return await self.client.get("/api/v1/" + path, headers={**self.headers, **headers})

    async def post(self, path: str, body: Any = None, **headers: str) -> Any:
        data = b"" if body is None else (body if isinstance(body, bytes | str) else json.dumps(body))
        async with request_thread():
            return await self.client.post(
                "/api/v1/" + path,
                data=data,
                content_type=headers.pop("content_type", "application/json"),
                headers={**self.headers, **headers},
            )


def token_for(user: User) -> str:
    return tokens.issue(user, "tests")[1]


@pytest.fixture
async def as_alice(alice: User) -> Api:  # noqa: F811
    return Api(await sync_to_async(token_for)(alice))


@pytest.fixture
async def as_bob(bob: User) -> Api:  # noqa: F811
    return Api(await sync_to_async(token_for)(bob))


@pytest.fixture
async def as_mallory(mallory: User) -> Api:  # noqa: F811
    return Api(await sync_to_async(token_for)(mallory))


@pytest.fixture
def anonymous(transactional_db: None) -> Api:
    return Api(None)


@pytest.fixture
def workers_mode(settings: Any, transactional_db: None, workflows: None) -> Iterator[None]:  # noqa: F811
    """``WFAPP_RUNTIME=workers`` for one test: runs execute in procrastinate jobs (PostgreSQL only)."""
    if connection.vendor != "postgresql":
        pytest.skip("the workers mode runs on PostgreSQL only: set DATABASE_URL")
    settings.WFAPP_RUNTIME = "workers"
    yield


def _requester_token(name: str) -> str:
    user = User.objects.filter(username=name).first() or _user(name, may_answer=True)
    return token_for(user)


@pytest.fixture
def waiting_run(engine_runtime: Any, as_alice: Api) -> Callable[..., Any]:  # noqa: F811
    """Start a run through the API and wait until it waits for an answer; return its document.
    alice starts it, or the operator named ``by`` (created if missing): a run's requester may not
    answer its approval questions (four-eyes), so tests that answer as alice start as another."""

    async def start(
        workflow: str = "expense_approval", node_input: Any = None, by: str | None = None
    ) -> dict[str, Any]:
        starter = as_alice if by is None else Api(await sync_to_async(_requester_token)(by))
        response = await starter.post(f"workflows/{workflow}/runs", {"input": node_input or EXPENSE})
        assert response.status_code == 201, response.content
        await settled(response.json()["id"], "waiting")
        run = await as_alice.get(f"runs/{response.json()['id']}")
        return dict(run.json())

    return start


async def event_kinds(run_id: str) -> list[str]:
    """The kinds of the run's log entries in order (a refusal must leave them as they were)."""
    rows = Event.objects.filter(session_id=run_id).order_by("seq").values_list("kind", flat=True)
    return [kind async for kind in rows]


def field_errors(response: Any) -> dict[str, str]:
    """A 422 validation problem's errors, field -> message (asserting that it is one)."""
    assert response.status_code == 422, response.content
    problem = response.json()
    assert problem["type"] == "/api/v1/problems/validation", problem
    return {error["field"]: error["message"] for error in problem["errors"]}
