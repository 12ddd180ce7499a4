"""``Idempotency-Key``: concurrent retries of one key start one run and answer once."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User

from tests.api.conftest import EXPENSE, Api
from wfapp.models import AnswerAttempt, Event, IdempotencyRecord, Session


async def test_concurrent_retries_of_one_key_start_one_run(
    engine_runtime: Any, alice: User, as_alice: Api
) -> None:
    clients = [Api(as_alice.headers["Authorization"].split()[1]) for _ in range(5)]
    key = {"Idempotency-Key": "ticket-4711"}
    responses = await asyncio.gather(
        *(c.post("workflows/expense_approval/runs", {"input": EXPENSE}, **key) for c in clients)
    )
    assert [r.status_code for r in responses] == [201] * 5
    assert len({r.json()["id"] for r in responses}) == 1
    assert len({r["Location"] for r in responses}) == 1
    assert sorted(r.get("Idempotent-Replayed", "") for r in responses) == ["", "true", "true", "true", "true"]
    assert await Session.objects.acount() == 1
    later = await as_alice.post("workflows/expense_approval/runs", {"input": EXPENSE}, **key)
    assert later.status_code == 201 and later.json()["id"] == responses[0].json()["id"]
    assert await Session.objects.acount() == 1


async def test_one_key_with_another_request_is_refused(
    engine_runtime: Any, as_alice: Api, as_bob: Api
) -> None:
    key = {"Idempotency-Key": "k-1"}
    first = await as_alice.post("workflows/expense_approval/runs", {"input": EXPENSE}, **key)
    other = await as_alice.post("workflows/expense_approval/runs", {"input": {**EXPENSE, "amount": 7}}, **key)
    assert other.status_code == 422 and other.json()["type"] == "/api/v1/problems/idempotency-key-reused"
    # Keys are per user: bob's k-1 is his own.
    bobs = await as_bob.post("workflows/expense_approval/runs", {"input": EXPENSE}, **key)
    assert bobs.status_code == 201 and bobs.json()["id"] != first.json()["id"]
    assert await Session.objects.acount() == 2


async def test_a_refused_request_leaves_its_key_free(engine_runtime: Any, as_alice: Api) -> None:
    key = {"Idempotency-Key": "k-2"}
    bad = await as_alice.post("workflows/expense_approval/runs", {"input": {"employee": "Ann"}}, **key)
    assert bad.status_code == 422 and await IdempotencyRecord.objects.acount() == 0
    fixed = await as_alice.post("workflows/expense_approval/runs", {"input": {"employee": "Ann"}}, **key)
    assert fixed.status_code == 422  # the same request again is refused again, never stored
    good = await as_alice.post("workflows/expense_approval/runs", {"input": EXPENSE}, **key)
    assert good.status_code == 201 and await Session.objects.acount() == 1
    for value in ("", "x" * 201, "naïve"):
        refused = await as_alice.post(
            "workflows/expense_approval/runs", {"input": EXPENSE}, **{"Idempotency-Key": value}
        )
        assert refused.status_code == 400 and "Idempotency-Key" in refused.json()["detail"]
    assert await Session.objects.acount() == 1


async def test_retried_answers_with_one_key_answer_once(waiting_run: Callable[..., Any], as_bob: Api) -> None:
    run = await waiting_run()
    qid = run["pending"][0]["id"]
    key = {"Idempotency-Key": "answer-1"}
    clients = [Api(as_bob.headers["Authorization"].split()[1]) for _ in range(3)]
    responses = await asyncio.gather(
        *(c.post(f"interrupts/{qid}/answer", {"answer": {"approved": True}}, **key) for c in clients)
    )
    assert {r.status_code for r in responses} <= {200, 202} and len({r.content for r in responses}) == 1
    assert await Event.objects.filter(session_id=run["id"], kind="answer").acount() == 1
    assert not await AnswerAttempt.objects.filter(outcome="already_answered").aexists()
    # Without the key, a second answer loses, and says who was first.
    late = await as_bob.post(f"interrupts/{qid}/answer", {"answer": {"approved": False}})
    assert late.status_code == 409 and late.json()["answered_by"] == "bob"
