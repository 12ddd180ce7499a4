"""Writers racing in separate threads, each with its own database connection: exactly one wins."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.db import connections

from engine.errors import ConcurrencyError, InterruptAlreadyAnswered
from engine.testing import stamp
from tests.wfapp import flows
from tests.wfapp.helpers import settled
from wfapp.models import AnswerAttempt, Event
from wfapp.runs import answering, starting
from wfapp.runs.runtime import Runtime
from wfapp.store.events import DjangoEventStore


def _race(*calls: Callable[[], Any]) -> list[Any]:
    """Run each call in its own thread, released together; return results or exceptions."""
    barrier = threading.Barrier(len(calls))
    outcomes: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            outcomes[index] = call()
        except Exception as error:
            outcomes[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, call)) for i, call in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return outcomes


async def test_two_appenders_in_threads_exactly_one_wins(transactional_db: None) -> None:
    store = DjangoEventStore()
    await store.create_session("race", "wf", None)

    def writer(tag: str) -> Callable[[], Any]:
        events = stamp("race", 1, [{"kind": "state", "state": {"writer": tag}}, {"kind": "started"}])
        return lambda: store.append_sync("race", events, 0).last_seq

    outcomes = await asyncio.to_thread(_race, writer("a"), writer("b"))
    assert sorted(map(type, outcomes), key=str) == sorted([int, ConcurrencyError], key=str)
    assert 2 in outcomes
    events = await store.list_events("race")
    assert [e.seq for e in events] == [1, 2]
    assert (await store.get_session("race")).last_seq == 2


async def test_two_concurrent_answers_one_takes_effect(
    engine_runtime: Runtime, alice: User, bob: User
) -> None:
    session_id = await starting.start_run("approval", {"n": 1})
    await settled(session_id, "waiting")

    def answer(user: User, approved: bool) -> Callable[[], Any]:
        def give() -> None:  # None for the winner (its turn is the runtime's business)
            async_to_sync(answering.answer_interrupt)(session_id, "ok", {"approved": approved}, user=user)

        return give

    outcomes = await asyncio.to_thread(_race, answer(alice, True), answer(bob, False))
    refused = [o for o in outcomes if isinstance(o, InterruptAlreadyAnswered)]
    assert len(refused) == 1 and outcomes.count(None) == 1
    winner = "alice" if outcomes[0] is None else "bob"
    assert refused[0].answered_by == winner

    session = await settled(session_id, "completed")
    assert session.output == {"approved": winner == "alice"}
    attempts = sorted(
        [(a.actor, a.outcome) async for a in AnswerAttempt.objects.filter(session_id=session_id)]
    )
    loser = "bob" if winner == "alice" else "alice"
    assert attempts == sorted([(winner, "accepted"), (loser, "already_answered")])
    answers = [e async for e in Event.objects.filter(session_id=session_id, kind="answer")]
    assert [e.author for e in answers] == [winner]
    # The run resumed once: the node after the interrupt started and ran exactly once.
    finish_started = await Event.objects.filter(
        session_id=session_id, kind="started", node_path__endswith="/finish@1"
    ).acount()
    assert finish_started == 1 and flows.count("approval.finish") == 1
