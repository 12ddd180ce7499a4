"""Bad input: a clear 4xx problem document each time, nothing written, nothing logged as an error."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import AsyncClient

from tests.api.conftest import EXPENSE, Api, request_thread
from wfapp.models import AnswerAttempt, Event, IdempotencyRecord, Interrupt, Session


async def _counts() -> tuple[int, ...]:
    models = (Session, Event, Interrupt, AnswerAttempt, IdempotencyRecord)
    return tuple([await m.objects.acount() for m in models])


@pytest.fixture
def no_errors_logged(caplog: pytest.LogCaptureFixture) -> Iterator[None]:
    caplog.set_level(logging.WARNING)
    yield
    errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert errors == [], [r.getMessage() for r in errors]


HUGE = '{"input": "' + "x" * 300_000 + '"}'
OVER = '{"input": "' + "x" * 70_000 + '"}'
START_CASES = [
    ("{not json", "application/json", 400, "malformed-json", "not valid JSON"),
    ('{"input": 1,}', "application/json", 400, "malformed-json", "not valid JSON"),
    ("input=1", "application/x-www-form-urlencoded", 415, "unsupported-media-type", "application/json"),
    ('{"input": {}}', "text/plain", 415, "unsupported-media-type", "text/plain"),
    ('{"input": {}, "extra": 1}', "application/json", 422, "validation", "extra"),
    ("{}", "application/json", 422, "validation", "input"),
    ("[1, 2]", "application/json", 422, "validation", "JSON object"),
    ('{"input": {"employee": "Ann", "amount": -3}}', "application/json", 422, "validation", "input.amount"),
    (OVER, "application/json", 413, "payload-too-large", "limit is 65536 bytes"),
    (HUGE, "application/json", 413, "payload-too-large", "limit is 65536 bytes"),
    ("", "application/json", 422, "validation", "body"),
]


@pytest.mark.parametrize(("body", "content_type", "status", "kind", "says"), START_CASES)
async def test_bad_start_bodies(
    engine_runtime: Any,
    as_alice: Api,
    no_errors_logged: None,
    body: str,
    content_type: str,
    status: int,
    kind: str,
    says: str,
) -> None:
    before = await _counts()
    response = await as_alice.post(
        "workflows/expense_approval/runs", body, content_type=content_type, **{"Idempotency-Key": "k"}
    )
    assert response.status_code == status, response.content
    assert response["Content-Type"] == "application/problem+json"
    problem = response.json()
    assert problem["type"] == f"/api/v1/problems/{kind}" and problem["status"] == status
    assert says in problem["detail"] + str(problem.get("errors", "")), problem
    assert await _counts() == before


async def test_bad_answers(waiting_run: Callable[..., Any], as_alice: Api, no_errors_logged: None) -> None:
    run = await waiting_run(by="rhea")
    path = f"interrupts/{run['pending'][0]['id']}/answer"
    before = await _counts()
    cases = [
        ({"answer": {"approved": "maybe"}}, 422, "answer.approved"),
        ({"answer": {}}, 422, "answer.approved"),
        ({"answer": {"approved": True}, "why": "x"}, 422, "why"),
        ({"reply": True}, 422, "answer"),
    ]
    for body, status, field in cases:
        response = await as_alice.post(path, body)
        assert response.status_code == status, response.content
        assert field in [e["field"] for e in response.json()["errors"]], response.json()
    # Schema-invalid answers reach the services, which keep an audit record of the attempt.
    assert (await _counts())[:3] == before[:3]
    assert await Event.objects.filter(kind="answer").acount() == 0


ANSWER_CASES = [
    ("{not json", "application/json", 400, "malformed-json"),
    ('{"answer": true,}', "application/json", 400, "malformed-json"),
    ("answer=yes", "application/x-www-form-urlencoded", 415, "unsupported-media-type"),
    ('{"answer": {"approved": true}}', "text/plain", 415, "unsupported-media-type"),
    ('{"answer": {"approved": true}, "extra": 1}', "application/json", 422, "validation"),
    ("[true]", "application/json", 422, "validation"),
    ("", "application/json", 422, "validation"),
    ('{"answer": "' + "x" * 70_000 + '"}', "application/json", 413, "payload-too-large"),
]


async def test_bad_answer_bodies_change_nothing(
    waiting_run: Callable[..., Any], as_alice: Api, no_errors_logged: None
) -> None:
    run = await waiting_run(by="rhea")
    path = f"interrupts/{run['pending'][0]['id']}/answer"
    before = await _counts()
    for body, content_type, status, kind in ANSWER_CASES:
        response = await as_alice.post(path, body, content_type=content_type, **{"Idempotency-Key": "a-1"})
        assert response.status_code == status, (body[:40], response.content)
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["type"] == f"/api/v1/problems/{kind}", response.json()
    assert await _counts() == before  # not even an audit record: none reached the services
    assert (await as_alice.get(path.removesuffix("/answer"))).json()["status"] == "pending"


@pytest.mark.parametrize(
    ("query", "kind"),
    [
        ("runs?after=bm90LW91cnM", "bad-cursor"),
        ("runs?after=%%%", "bad-cursor"),
        ("interrupts?after=WzEsMl0", "bad-cursor"),
        ("runs?status=sleeping", "validation"),
        ("interrupts?sort=sideways", "validation"),
        ("runs/x/events?after=-1", "validation"),
        ("runs/x/events?limit=100000", "validation"),
        ("runs/x/stream?after=-1", "validation"),
        ("interrupts/stream?after=-2", "validation"),
        ("interrupts/stream?workflow=" + "w" * 201, "validation"),
    ],
)
async def test_bad_queries(as_alice: Api, no_errors_logged: None, query: str, kind: str) -> None:
    response = await as_alice.get(query)
    assert response.status_code in (400, 422)
    assert response.json()["type"] == f"/api/v1/problems/{kind}"


@pytest.mark.parametrize(
    ("header", "kind"),
    [
        ("Bearer wfa_not-a-real-token", "invalid-token"),
        ("Bearer ", "invalid-token"),
        ("bearer " + "x" * 5000, "invalid-token"),
        ("Basic YWxpY2U6cHctYWxpY2U=", "unauthenticated"),
        ("Token abc", "unauthenticated"),
    ],
)
async def test_bad_tokens(
    alice: User, workflows: None, no_errors_logged: None, header: str, kind: str
) -> None:
    before = await _counts()
    client = AsyncClient()
    async with request_thread():
        response = await client.post(
            "/api/v1/workflows/expense_approval/runs",
            {"input": EXPENSE},
            content_type="application/json",
            headers={"Authorization": header},
        )
    assert response.status_code == 401 and response.json()["type"] == f"/api/v1/problems/{kind}"
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert await _counts() == before


async def test_a_session_must_send_the_csrf_token_to_change_anything(
    engine_runtime: Any, alice: User, no_errors_logged: None
) -> None:
    client = AsyncClient(enforce_csrf_checks=True)
    await client.aforce_login(alice)
    async with request_thread():
        read = await client.get("/api/v1/runs")  # reading needs no CSRF token
        refused = await client.post(
            "/api/v1/workflows/expense_approval/runs", {"input": EXPENSE}, content_type="application/json"
        )
    assert read.status_code == 200
    assert refused.status_code == 403 and refused.json()["type"] == "/api/v1/problems/csrf-failed"
    assert await Session.objects.acount() == 0
    async with request_thread():
        page = await client.get("/api/tokens/")
        token = page.cookies["csrftoken"].value
        started = await client.post(
            "/api/v1/workflows/expense_approval/runs",
            {"input": EXPENSE},
            content_type="application/json",
            headers={"X-CSRFToken": token},
        )
    assert started.status_code == 201 and started.json()["created_by"] == "alice"


async def test_unknown_urls_and_methods_are_problems(as_alice: Api, no_errors_logged: None) -> None:
    missing = await as_alice.get("no/such/thing")
    assert missing.status_code == 404 and missing.json()["type"] == "/api/v1/problems/not-found"
    async with request_thread():
        wrong = await as_alice.client.delete("/api/v1/runs", headers=as_alice.headers)
    assert wrong.status_code == 405 and wrong.json()["type"] == "/api/v1/problems/method-not-allowed"
    assert wrong["Allow"] == "GET"
    kinds = await as_alice.get("problems/already-answered")
    assert kinds.json()["status"] == 409 and kinds.json()["title"] == "Already answered"
