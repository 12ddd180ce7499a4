"""Answers that arrive while a worker is advancing the same run are not lost."""

from __future__ import annotations

import asyncio
from pathlib import Path

from django.contrib.auth.models import User

from tests.wfapp import flows
from tests.wfapp.helpers import settled
from wfapp.models import Event
from wfapp.runs import answering, starting
from wfapp.runs.runtime import Runtime

EXPENSE = {"employee": "ann", "amount": 5000, "category": "travel", "description": "conference"}


async def test_two_answers_in_quick_succession(engine_runtime: Runtime, alice: User, bob: User) -> None:
    session_id = await starting.start_run("expense_approval", EXPENSE)
    await settled(session_id, "waiting")
    await answering.answer_interrupt(
        session_id, "manager-approval", {"approved": True, "comment": "m"}, user=alice
    )
    await answering.answer_interrupt(
        session_id, "finance-approval", {"approved": True, "comment": "f"}, user=bob
    )
    session = await settled(session_id, "completed", "failed")
    assert session.status == "completed", session.error
    assert session.output["comments"] == ["manager: m", "finance: f"]
    started = [
        p
        async for p in Event.objects.filter(session_id=session_id, kind="started").values_list(
            "node_path", flat=True
        )
    ]
    assert sum(p.endswith("/both_decide@1") for p in started) == 1


async def test_an_answer_while_another_branch_runs(
    engine_runtime: Runtime, alice: User, test_dir: Path
) -> None:
    session_id = await starting.start_run("two_asks", None)
    await settled(session_id, "waiting")
    await answering.answer_interrupt(session_id, "a", {"approved": True}, user=alice)
    async with asyncio.timeout(10):
        while not (test_dir / "slow_a.started").exists():
            await asyncio.sleep(0.01)
    await answering.answer_interrupt(session_id, "b", {"approved": True}, user=alice)
    session = await settled(session_id, "completed", "failed")
    assert session.status == "completed", session.error
    assert flows.count("two_asks.after_b") == 1
    answers = [e.author async for e in Event.objects.filter(session_id=session_id, kind="answer")]
    assert answers == ["alice", "alice"]
    # The worker's commit after slow_a met the answer to b: the engine folds it in and goes on,
    # so the node that was in flight ran exactly once.
    assert flows.count("two_asks.slow_a") == 1
