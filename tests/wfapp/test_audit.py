"""The answer audit: every attempt on a known question is kept, and every race loser learns who won."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.contrib.auth.models import User

from engine import Runner
from engine.errors import InterruptAlreadyAnswered, InvalidAnswerError
from tests.wfapp.conftest import OPERATOR_PERMISSIONS
from tests.wfapp.helpers import settled
from tests.wfapp.test_concurrency import _race
from wfapp.models import AnswerAttempt, AttemptOutcome, Event
from wfapp.runs import answering, interventions, starting
from wfapp.runs.runtime import Runtime

ANSWERERS = 24


def _operators(count: int) -> list[User]:
    from django.contrib.auth.models import Permission

    granted = list(
        Permission.objects.filter(content_type__app_label="wfapp", codename__in=OPERATOR_PERMISSIONS)
    )
    users = []
    for i in range(count):
        user = User.objects.create_user(f"op{i:02d}")
        user.user_permissions.add(*granted)
        users.append(User.objects.get(pk=user.pk))
    return users


async def _outcomes(session_id: str) -> list[tuple[str, str]]:
    return sorted([(a.actor, a.outcome) async for a in AnswerAttempt.objects.filter(session_id=session_id)])


async def test_every_loser_of_a_crowded_race_is_told_who_won_and_when(engine_runtime: Runtime) -> None:
    """Many answer at once while the runtime completes the run: no loser hears "no longer open"."""
    users = await asyncio.to_thread(_operators, ANSWERERS)
    for round_ in range(3):  # each round a fresh run; the runtime finishes it as the answers land
        session_id = await starting.start_run("approval", {"n": round_})
        await settled(session_id, "waiting")

        def answer(user: User, run: str = session_id) -> Callable[[], Any]:
            def give() -> None:  # None for the winner (its turn is the runtime's business)
                async_to_sync(answering.answer_interrupt)(
                    run, "ok", {"approved": True, "comment": user.username}, user=user
                )

            return give

        outcomes = await asyncio.to_thread(_race, *(answer(user) for user in users))
        winners = [user.username for user, outcome in zip(users, outcomes, strict=True) if outcome is None]
        assert len(winners) == 1, outcomes
        losers = [o for o in outcomes if o is not None]
        assert all(isinstance(o, InterruptAlreadyAnswered) for o in losers), losers
        assert {o.answered_by for o in losers} == set(winners)
        assert all(isinstance(o.answered_at, datetime) for o in losers)
        assert f"already answered by {winners[0]}" in str(losers[0])
        assert (await settled(session_id, "completed")).output == {"approved": True}
        expected = [(u.username, "accepted" if u.username in winners else "already_answered") for u in users]
        assert await _outcomes(session_id) == sorted(expected)


async def test_a_loser_that_finds_the_run_completed_still_learns_who_won(
    engine_runtime: Runtime, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The 4 %: bob's answer was checked before alice's commit and read the log after the run ended."""
    session_id = await starting.start_run("approval", {"n": 1})
    await settled(session_id, "waiting")

    class Overtaken(Runner):
        async def answer(self, session_id: str, answers: Any, actor: str | None = None, **pin: Any) -> None:
            if actor == "bob":  # alice answers, and the run completes, while bob's request is in flight
                await Runner(self.workflow, store=self.store).answer(
                    session_id, {"ok": {"approved": True}}, "alice"
                )
                engine_runtime.kick(session_id)
                await settled(session_id, "completed")
            await super().answer(session_id, answers, actor, **pin)

    monkeypatch.setattr(answering, "Runner", Overtaken)
    with pytest.raises(InterruptAlreadyAnswered) as refused:
        await answering.answer_interrupt(session_id, "ok", {"approved": False}, user=bob)
    assert refused.value.answered_by == "alice" and isinstance(refused.value.answered_at, datetime)
    assert await _outcomes(session_id) == [("alice", "accepted"), ("bob", "already_answered")]


async def test_refusals_are_audited_with_their_outcome(engine_runtime: Runtime, alice: User) -> None:
    session_id = await starting.start_run("approval", {"n": 1})
    await settled(session_id, "waiting")
    with pytest.raises(InvalidAnswerError):
        await answering.answer_interrupt(session_id, "ok", {"approved": "perhaps"}, user=alice)
    await interventions.cancel_run(session_id)
    with pytest.raises(Exception, match="cancelled"):
        await answering.answer_interrupt(session_id, "ok", {"approved": True}, user=alice)
    attempts = [(a.outcome, a.value) async for a in AnswerAttempt.objects.filter(session_id=session_id)]
    assert attempts == [
        (AttemptOutcome.INVALID, {"approved": "perhaps"}),
        (AttemptOutcome.REFUSED, {"approved": True}),
    ]
    assert await Event.objects.filter(session_id=session_id, kind="answer").acount() == 0
