"""``Idempotency-Key``: concurrent retries of one key start one run and answer once; records
past the retention are purged by the embedded runtime's sweep and the scaled mode's."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from tests.api.conftest import EXPENSE, Api, workers_mode
from wfapp.models import AnswerAttempt, Event, IdempotencyRecord, Session
from wfapp.store import idempotency
from wfapp.worker import sweep as sweeping
from wfapp.worker.process import running_worker

__all__ = ["workers_mode"]  # the fixture


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


async def _keys_started(api: Api, *keys: str) -> None:
    for key in keys:
        started = await api.post(
            "workflows/expense_approval/runs", {"input": EXPENSE}, **{"Idempotency-Key": key}
        )
        assert started.status_code == 201, started.content


async def _age(*keys: str, hours: float) -> None:
    aged = timezone.now() - timedelta(hours=hours)
    await IdempotencyRecord.objects.filter(key__in=keys).aupdate(created_at=aged)


async def _kept() -> set[str]:
    return {key async for key in IdempotencyRecord.objects.values_list("key", flat=True)}


async def test_the_runtimes_sweep_purges_keys_past_the_retention(
    engine_runtime: Any, as_alice: Api, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WFAPP_IDEMPOTENCY_HOURS = 2
    monkeypatch.setattr(idempotency, "PURGE_BATCH", 2)  # one purge looks at two records at most
    await _keys_started(as_alice, "old-1", "old-2", "old-3", "recent")
    await _age("old-1", "old-2", "old-3", hours=3)
    await _age("recent", hours=1)
    await engine_runtime.sweep()
    assert await _kept() == {"old-3", "recent"}
    await engine_runtime.sweep()
    assert await _kept() == {"recent"}
    await engine_runtime.sweep()  # nothing due: nothing else goes
    assert await _kept() == {"recent"}
    # A purged key is forgotten: sent again, it starts a new run.
    before = await Session.objects.acount()
    again = await as_alice.post(
        "workflows/expense_approval/runs", {"input": EXPENSE}, **{"Idempotency-Key": "old-1"}
    )
    assert again.status_code == 201 and "Idempotent-Replayed" not in again
    replayed = await as_alice.post(
        "workflows/expense_approval/runs", {"input": EXPENSE}, **{"Idempotency-Key": "recent"}
    )
    assert replayed["Idempotent-Replayed"] == "true"
    assert await Session.objects.acount() == before + 1


async def test_the_scaled_modes_sweep_purges_keys_past_the_retention(
    workers_mode: None, as_alice: Api
) -> None:
    async with running_worker():
        await _keys_started(as_alice, "old", "recent")
        await _age("old", hours=25)
        done = await sweeping.sweep()
    assert done["purged_idempotency_keys"] == 1
    assert await _kept() == {"recent"}
