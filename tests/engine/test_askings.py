"""Issue 24, item 1: an answer pinned to one asking of an interrupt never lands on another."""

from __future__ import annotations

from typing import Any

import pytest

from engine import START, Asking, Event, InMemoryEventStore, RequestInput, Runner, Workflow, asking_digest
from engine.errors import AskingChangedError, AskingClosedError, InterruptAlreadyAnswered


def _payments() -> Workflow:
    """Asks ``payment`` once per payment: #1 of 10, then #2 of 99,999."""

    def first(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(
            message="Pay #1?", payload={"amount": 10}, interrupt_id="payment", response_schema=bool
        )

    def second(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(
            message="Pay #2?", payload={"amount": 99_999}, interrupt_id="payment", response_schema=bool
        )

    def done(node_input: Any) -> str:
        return "paid"

    return Workflow(name="payments", edges=[(START, first, second, done)])


async def _askings(store: InMemoryEventStore, session_id: str) -> list[Event]:
    return [event for event in await store.list_events(session_id) if event.kind == "interrupt"]


async def test_a_repeated_answer_to_the_first_asking_never_answers_the_second() -> None:
    store = InMemoryEventStore()
    runner = Runner(_payments(), store=store)
    waiting = await runner.run(None)
    [first] = await _askings(store, waiting.session_id)
    pin = {"payment": Asking(first.seq, asking_digest(first.interrupt))}  # type: ignore[arg-type]
    again = await runner.resume(waiting.session_id, {"payment": True}, actor="ann", asking=pin)
    assert again.status == "waiting"
    assert again.interrupts[0].payload == {"amount": 99_999}
    before = await store.list_events(waiting.session_id)

    with pytest.raises(InterruptAlreadyAnswered) as refused:
        await runner.answer(waiting.session_id, {"payment": True}, actor="ann", asking=pin)
    assert refused.value.answered_by == "ann"
    assert await store.list_events(waiting.session_id) == before

    [_, second] = await _askings(store, waiting.session_id)
    answers = [event.answer for event in before if event.kind == "answer"]
    assert [(a.request_seq, a.digest) for a in answers if a] == [(first.seq, pin["payment"].digest)]
    assert second.seq > first.seq


async def test_an_asking_asked_again_before_its_answer_is_superseded() -> None:
    store = InMemoryEventStore()
    runner = Runner(_payments(), store=store)
    waiting = await runner.run(None)
    [first] = await _askings(store, waiting.session_id)
    await runner.answer(waiting.session_id, {"payment": True}, actor="bob")  # unpinned: the pending one
    await runner.advance(waiting.session_id)
    [_, second] = await _askings(store, waiting.session_id)
    # A stale pin on the first asking: answered by bob already.
    with pytest.raises(InterruptAlreadyAnswered):
        await runner.answer(waiting.session_id, {"payment": False}, asking={"payment": Asking(first.seq)})
    # A pin on an asking that never was (or was withdrawn) names the one pending now.
    with pytest.raises(AskingClosedError) as closed:
        await runner.answer(waiting.session_id, {"payment": False}, asking={"payment": Asking(first.seq + 1)})
    assert closed.value.pending_seq == second.seq


async def test_an_answer_given_to_other_content_is_refused() -> None:
    store = InMemoryEventStore()
    runner = Runner(_payments(), store=store)
    waiting = await runner.run(None)
    [first] = await _askings(store, waiting.session_id)
    assert first.interrupt is not None
    shown = asking_digest(first.interrupt.model_copy(update={"payload": {"amount": 1}}))
    with pytest.raises(AskingChangedError):
        await runner.answer(
            waiting.session_id, {"payment": True}, asking={"payment": Asking(first.seq, shown)}
        )
    assert [e.kind for e in await store.list_events(waiting.session_id)].count("answer") == 0


async def test_the_store_refuses_an_answer_event_for_another_asking() -> None:
    store = InMemoryEventStore()
    runner = Runner(_payments(), store=store)
    waiting = await runner.run(None)
    [first] = await _askings(store, waiting.session_id)
    await runner.resume(waiting.session_id, {"payment": True})
    log = await store.list_events(waiting.session_id)
    [answer] = [event for event in log if event.kind == "answer"]
    stale = answer.model_copy(update={"seq": len(log) + 1})
    with pytest.raises(AskingClosedError):
        await store.append(waiting.session_id, [stale], expected_seq=len(log))
    assert answer.answer is not None and answer.answer.request_seq == first.seq
