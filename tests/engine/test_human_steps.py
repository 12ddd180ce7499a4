"""Issue 17: human steps in the engine: deadlines, time-outs, quorums, escalation, claims."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    TIMEOUT_FAIL,
    Context,
    InMemoryEventStore,
    RequestInput,
    RetryConfig,
    Runner,
    Workflow,
    node,
    replay_check,
)
from engine.errors import (
    ConfigurationError,
    DecisionError,
    InterruptClaimedError,
    InterruptTimeoutError,
)
from engine.human import eligible

HOUR = 3600.0


class Decision(BaseModel):
    approved: bool
    comment: str = ""


def ask_node(**human: Any) -> Any:
    @node(rerun_on_resume=False)
    async def ask(node_input: Any):
        yield RequestInput(interrupt_id="q", message="Approve?", response_schema=Decision, **human)

    return ask


def flow(**human: Any) -> Workflow:
    return Workflow(name="human", edges=[(START, ask_node(**human))])


def logged(store: InMemoryEventStore, session_id: str, kind: str) -> list[dict[str, Any]]:
    return [event for event in store.dump(session_id)["events"] if event["kind"] == kind]


async def later(runner: Runner, session_id: str, seconds: float) -> list[Any]:
    return await runner.fire_timers(session_id, now=time.time() + seconds)


async def test_a_deadline_records_the_default_answer_once_and_survives_a_restart() -> None:
    store = InMemoryEventStore()
    wf = flow(timeout=timedelta(hours=1), on_timeout={"approved": False, "comment": "too late"})
    waiting = await Runner(wf, store=store).run(None)
    assert waiting.status == "waiting"
    [question] = waiting.interrupts
    assert question.human is not None and question.human.due_at is not None
    assert question.human.due_at == pytest.approx(time.time() + HOUR, abs=60)

    assert await later(Runner(wf, store=store), waiting.session_id, HOUR / 2) == []  # not due yet
    # A restart: new runners on the same log; two fire at once, one default answer is written.
    first, second = Runner(wf, store=store), Runner(wf, store=store)
    fired = await asyncio.gather(
        later(first, waiting.session_id, HOUR + 1), later(second, waiting.session_id, HOUR + 1)
    )
    assert sorted(len(events) for events in fired) == [0, 1]
    answers = logged(store, waiting.session_id, "answer")
    assert [(a["author"], a["answer"]["actor"], a["answer"]["value"]) for a in answers] == [
        ("deadline", "deadline", {"approved": False, "comment": "too late"})
    ]
    done = await Runner(wf, store=store).advance(waiting.session_id)
    assert (done.status, done.output) == ("completed", {"approved": False, "comment": "too late"})
    assert replay_check(wf, store.dump(waiting.session_id)).replays


async def test_an_answer_before_the_deadline_leaves_nothing_to_fire() -> None:
    store = InMemoryEventStore()
    wf = flow(deadline=datetime.now(UTC) + timedelta(minutes=5), on_timeout={"approved": True})
    runner = Runner(wf, store=store)
    waiting = await runner.run(None)
    await runner.resume(waiting.session_id, {"q": {"approved": False}}, actor="ann")
    assert await later(runner, waiting.session_id, HOUR) == []


@node(rerun_on_resume=True)
async def guarded(ctx: Context, node_input: Any):
    try:
        verdict = await ctx.run_node(ask_node(timeout=timedelta(minutes=10), on_timeout=TIMEOUT_FAIL), None)
    except InterruptTimeoutError as late:
        yield f"timed out: {late.interrupt_id}"
        return
    yield verdict


async def test_a_time_out_fails_the_asking_node_and_the_caller_routes_it() -> None:
    store = InMemoryEventStore()
    wf = Workflow(name="routed", edges=[(START, guarded)])
    waiting = await Runner(wf, store=store).run(None)
    assert waiting.status == "waiting"
    [fired] = await later(Runner(wf, store=store), waiting.session_id, HOUR)
    assert fired.answer is not None and fired.answer.timed_out
    done = await Runner(wf, store=store).advance(waiting.session_id)  # a restart in the middle
    assert (done.status, done.output) == ("completed", "timed out: q")
    errors = logged(store, waiting.session_id, "error")
    assert [e["error"]["type"] for e in errors] == ["InterruptTimeoutError"]
    assert replay_check(wf, store.dump(waiting.session_id)).replays


async def test_a_time_out_with_a_retry_asks_again_with_a_new_deadline() -> None:
    store = InMemoryEventStore()
    ask = ask_node(timeout=timedelta(minutes=10))  # TIMEOUT_FAIL is the default
    ask.retry_config = RetryConfig(max_attempts=2, initial_delay=0, jitter=0)
    wf = Workflow(name="retried", edges=[(START, ask)])
    waiting = await Runner(wf, store=store).run(None)
    [before] = waiting.interrupts
    await later(Runner(wf, store=store), waiting.session_id, HOUR)
    again = await Runner(wf, store=store).advance(waiting.session_id)
    assert again.status == "waiting"
    [after] = again.interrupts
    assert after.id == "q" and after.human and before.human
    assert after.human.asked_at > before.human.asked_at
    assert after.human.due_at == pytest.approx(after.human.asked_at + 600)


async def test_a_time_out_without_retry_fails_the_run_saying_so() -> None:
    store = InMemoryEventStore()
    wf = flow(timeout=timedelta(minutes=10), on_timeout=TIMEOUT_FAIL)
    waiting = await Runner(wf, store=store).run(None)
    await later(Runner(wf, store=store), waiting.session_id, HOUR)
    failed = await Runner(wf, store=store).advance(waiting.session_id)
    assert failed.status == "failed" and failed.error_type == "InterruptTimeoutError"
    assert "'q' asked by node human@1/ask@1 was not answered by its deadline" in (failed.error or "")
    retried = await Runner(wf, store=store).resume(waiting.session_id, {})
    assert retried.status == "waiting"  # a retry of the run asks afresh


QUORUM = {"approvals_required": 2, "response_schema": Decision}


async def test_a_quorum_stays_pending_until_two_distinct_people_approve() -> None:
    store = InMemoryEventStore()
    wf = flow(approvals_required=2)
    waiting = await Runner(wf, store=store).run(None)
    runner = Runner(wf, store=store)
    one = await runner.resume(waiting.session_id, {"q": {"approved": True, "comment": "ok"}}, actor="ann")
    assert one.status == "waiting" and [i.id for i in one.interrupts] == ["q"]
    with pytest.raises(DecisionError, match="ann has already approved"):
        await Runner(wf, store=store).answer(waiting.session_id, {"q": {"approved": True}}, actor="ann")
    with pytest.raises(DecisionError, match="name who answers"):
        await Runner(wf, store=store).answer(waiting.session_id, {"q": {"approved": True}})
    done = await Runner(wf, store=store).resume(waiting.session_id, {"q": {"approved": True}}, actor="bo")
    assert done.status == "completed"
    assert done.output == [
        {"actor": "ann", "answer": {"approved": True, "comment": "ok"}},
        {"actor": "bo", "answer": {"approved": True}},
    ]
    answers = [e["answer"]["actor"] for e in logged(store, waiting.session_id, "answer")]
    assert answers == ["ann", "bo"]  # each approval is its own event by its actor
    assert replay_check(wf, store.dump(waiting.session_id)).replays


async def test_one_refusal_ends_a_quorum_at_once() -> None:
    wf = flow(approvals_required=3)
    runner = Runner(wf)
    waiting = await runner.run(None)
    await runner.resume(waiting.session_id, {"q": {"approved": True}}, actor="ann")
    done = await runner.resume(waiting.session_id, {"q": {"approved": False, "comment": "no"}}, actor="bo")
    assert done.status == "completed"
    assert [given["actor"] for given in done.output] == ["ann", "bo"]
    assert done.output[-1]["answer"]["approved"] is False


async def test_escalation_and_reminder_are_events_and_widen_who_may_answer() -> None:
    store = InMemoryEventStore()
    wf = flow(
        assignees=["group:managers"],
        remind_after=timedelta(minutes=30),
        escalate_after=timedelta(hours=1),
        escalate_to=["group:directors", "carol"],
    )
    waiting = await Runner(wf, store=store).run(None)
    [question] = waiting.interrupts
    assert eligible(question.human, None) == ["group:managers"]
    reminded = await later(Runner(wf, store=store), waiting.session_id, HOUR / 2 + 1)
    assert [e.assignment["decision"] for e in reminded if e.assignment] == ["remind"]
    escalated = await later(Runner(wf, store=store), waiting.session_id, HOUR + 1)
    assert [e.assignment["decision"] for e in escalated if e.assignment] == ["escalate"]
    assert await later(Runner(wf, store=store), waiting.session_id, HOUR + 2) == []  # once only
    runner = Runner(wf, store=store)
    loaded = await runner._load(waiting.session_id)
    state = loaded.index.people.questions["q"]
    assert eligible(question.human, state) == ["group:managers", "group:directors", "carol"]
    assert (await runner.result(waiting.session_id)).status == "waiting"


async def test_claims_one_wins_and_unclaim_frees_it() -> None:
    store = InMemoryEventStore()
    wf = flow(assignees=["ann", "bo"])
    waiting = await Runner(wf, store=store).run(None)
    outcomes = await asyncio.gather(
        Runner(wf, store=store).decide(waiting.session_id, "q", "claim", "ann"),
        Runner(wf, store=store).decide(waiting.session_id, "q", "claim", "bo"),
        return_exceptions=True,
    )
    assert sorted(type(o).__name__ for o in outcomes) == ["Event", "InterruptClaimedError"]
    winner = next(o for o in outcomes if not isinstance(o, BaseException))
    loser = "bo" if winner.author == "ann" else "ann"
    with pytest.raises(InterruptClaimedError):
        await Runner(wf, store=store).decide(waiting.session_id, "q", "unclaim", loser)
    await Runner(wf, store=store).decide(waiting.session_id, "q", "unclaim", winner.author)
    await Runner(wf, store=store).decide(waiting.session_id, "q", "claim", loser)
    with pytest.raises(DecisionError, match="at least one"):
        await Runner(wf, store=store).decide(waiting.session_id, "q", "reassign", "admin", users=[])
    kinds = [e["assignment"]["decision"] for e in logged(store, waiting.session_id, "assignment")]
    assert kinds == ["claim", "unclaim", "claim"]
    assert replay_check(wf, store.dump(waiting.session_id)).replays
    done = await Runner(wf, store=store).resume(waiting.session_id, {"q": {"approved": True}}, actor=loser)
    assert done.status == "completed"


def test_bad_human_fields_are_refused_when_the_question_is_built() -> None:
    with pytest.raises(ConfigurationError, match="on_timeout= does not fit the response_schema: approved"):
        RequestInput(response_schema=Decision, timeout=timedelta(minutes=1), on_timeout={"approved": "yes"})
    with pytest.raises(ConfigurationError, match="needs timeout= or deadline="):
        RequestInput(response_schema=Decision, on_timeout={"approved": True})
    with pytest.raises(ConfigurationError, match="aware datetime"):
        RequestInput(deadline=datetime(2030, 1, 1), on_timeout=TIMEOUT_FAIL)
    with pytest.raises(ConfigurationError, match="boolean 'approved' field"):
        RequestInput(response_schema={"type": "string"}, approvals_required=2)
    with pytest.raises(ConfigurationError, match="go together"):
        RequestInput(escalate_after=timedelta(hours=1))
    with pytest.raises(ConfigurationError, match="'group:'"):
        RequestInput(assignees=["group:"])


async def test_a_bad_default_fails_the_node_naming_the_field() -> None:
    @node(rerun_on_resume=False)
    async def sloppy(node_input: Any):
        yield RequestInput(response_schema=Decision, timeout=timedelta(minutes=1), on_timeout={"ok": 1})

    result = await Runner(Workflow(name="sloppy", edges=[(START, sloppy)])).run(None)
    assert result.status == "failed" and "on_timeout=" in (result.error or "")


class Directory(InMemoryEventStore):
    """A store that knows its host's people: ann and the group finance."""

    async def unknown_names(self, names: list[str]) -> list[str]:
        return [name for name in names if name not in ("ann", "group:finance")]


async def test_a_store_with_a_directory_fails_a_node_that_assigns_to_strangers() -> None:
    store = Directory()
    known = await Runner(flow(assignees=["ann", "group:finance"]), store=store).run(None)
    assert known.status == "waiting"
    strangers = await Runner(
        flow(assignees=["ann", "zed"], escalate_after=timedelta(hours=1), escalate_to=["group:ghosts"]),
        store=store,
    ).run(None)
    assert strangers.status == "failed"
    assert "assigns its question to 'zed', 'group:ghosts', which are no known users or groups" in (
        strangers.error or ""
    )
