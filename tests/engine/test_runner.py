"""The Runner API: run, resume, answer, advance, cancel, result, stream, stream_resume."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    Event,
    InMemoryEventStore,
    Interrupt,
    RequestInput,
    Runner,
    RunResult,
    Workflow,
    node,
)
from engine.errors import (
    CallerError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    NoAnswersError,
    SessionExistsError,
    SessionStateError,
    UnknownInterruptError,
    UnknownSessionError,
)


class Decision(BaseModel):
    approved: bool
    comment: str = ""


def approval_workflow(calls: dict[str, int]) -> Workflow:
    def prepare(node_input: int) -> int:
        calls["prepare"] = calls.get("prepare", 0) + 1
        return node_input * 10

    @node(rerun_on_resume=False)
    async def approve(ctx: Any, node_input: int):
        calls["approve"] = calls.get("approve", 0) + 1
        yield RequestInput(
            interrupt_id="approve",
            message=f"Approve {node_input}?",
            payload={"amount": node_input},
            response_schema=Decision,
        )

    def finish(node_input: dict[str, Any]) -> str:
        calls["finish"] = calls.get("finish", 0) + 1
        return "approved" if node_input["approved"] else f"rejected: {node_input['comment']}"

    return Workflow(name="approval", edges=[(START, prepare, approve, finish)])


def snapshot(store: InMemoryEventStore, session_id: str) -> str:
    return json.dumps(store.dump(session_id), sort_keys=True)


@pytest.fixture
def calls() -> dict[str, int]:
    return {}


@pytest.fixture
def runner(calls: dict[str, int]) -> Runner:
    return Runner(approval_workflow(calls), store=InMemoryEventStore())


async def test_run_waits_with_the_pending_interrupt(runner: Runner) -> None:
    result = await runner.run(4)
    assert isinstance(result, RunResult)
    assert result.status == "waiting"
    assert result.output is None and result.error is None
    [interrupt] = result.interrupts
    assert isinstance(interrupt, Interrupt)
    assert (interrupt.id, interrupt.node_path, interrupt.message) == (
        "approve",
        "approval@1/approve@1",
        "Approve 40?",
    )
    assert interrupt.payload == {"amount": 40}
    assert interrupt.response_schema is not None and interrupt.response_schema["required"] == ["approved"]


async def test_resume_records_the_answer_with_its_actor_and_completes(
    runner: Runner, calls: dict[str, int]
) -> None:
    waiting = await runner.run(4)
    result = await runner.resume(waiting.session_id, {"approve": {"approved": True}}, actor="alice")
    assert (result.status, result.output) == ("completed", "approved")
    assert calls == {"prepare": 1, "approve": 1, "finish": 1}
    events = await runner.store.list_events(waiting.session_id)
    [answer] = [e for e in events if e.kind == "answer"]
    assert answer.author == "alice" and answer.answer is not None
    assert (answer.answer.interrupt_id, answer.answer.value, answer.answer.actor) == (
        "approve",
        {"approved": True},
        "alice",
    )
    assert answer.node_path == "approval@1/approve@1"


async def test_answer_then_advance_are_separate_steps(runner: Runner, calls: dict[str, int]) -> None:
    waiting = await runner.run(1)
    await runner.answer(
        waiting.session_id, {"approve": {"approved": False, "comment": "too much"}}, actor="bob"
    )
    assert calls.get("finish") is None
    pending = await runner.result(waiting.session_id)
    assert pending.status == "waiting" and pending.interrupts == []
    result = await runner.advance(waiting.session_id)
    assert (result.status, result.output) == ("completed", "rejected: too much")
    assert (await runner.result(waiting.session_id)).output == "rejected: too much"


async def test_result_reads_the_run_from_the_log(runner: Runner) -> None:
    waiting = await runner.run(2)
    fresh = Runner(runner.workflow, store=runner.store)
    assert await fresh.result(waiting.session_id) == waiting


async def test_run_with_an_existing_session_id_is_refused(runner: Runner) -> None:
    first = await runner.run(1, session_id="fixed")
    assert first.session_id == "fixed"
    with pytest.raises(SessionExistsError):
        await runner.run(1, session_id="fixed")


@pytest.mark.parametrize(
    ("answers", "error"),
    [
        ({"nope": {"approved": True}}, UnknownInterruptError),
        ({"approve": {"approved": "yes please"}}, InvalidAnswerError),
        ({"approve": {"comment": "missing approved"}}, InvalidAnswerError),
        ({}, NoAnswersError),
    ],
)
async def test_caller_errors_leave_the_log_unchanged(
    runner: Runner, answers: dict[str, Any], error: type[Exception]
) -> None:
    waiting = await runner.run(3)
    before = snapshot(runner.store, waiting.session_id)
    with pytest.raises(error) as raised:
        await runner.resume(waiting.session_id, answers)
    assert isinstance(raised.value, ValueError) and isinstance(raised.value, CallerError)
    assert snapshot(runner.store, waiting.session_id) == before


async def test_invalid_answer_names_the_field(runner: Runner) -> None:
    waiting = await runner.run(3)
    with pytest.raises(InvalidAnswerError) as raised:
        await runner.answer(waiting.session_id, {"approve": {"approved": "maybe"}})
    assert set(raised.value.field_errors) == {"approved"}
    assert "approved" in str(raised.value)


async def test_a_second_answer_is_refused_naming_the_first(runner: Runner) -> None:
    waiting = await runner.run(3)
    await runner.answer(waiting.session_id, {"approve": {"approved": True}}, actor="alice")
    before = snapshot(runner.store, waiting.session_id)
    with pytest.raises(InterruptAlreadyAnswered) as raised:
        await runner.answer(waiting.session_id, {"approve": {"approved": False}}, actor="bob")
    assert raised.value.answered_by == "alice"
    assert snapshot(runner.store, waiting.session_id) == before


async def test_unknown_session_raises(runner: Runner) -> None:
    for call in (runner.result("missing"), runner.advance("missing"), runner.resume("missing", {"a": 1})):
        with pytest.raises(UnknownSessionError):
            await call


async def test_completed_and_cancelled_runs_cannot_continue(runner: Runner) -> None:
    waiting = await runner.run(1)
    done = await runner.resume(waiting.session_id, {"approve": {"approved": True}})
    assert done.status == "completed"
    with pytest.raises(SessionStateError):
        await runner.advance(done.session_id)
    other = await runner.run(2)
    cancelled = await runner.cancel(other.session_id, actor="carol")
    assert cancelled.status == "cancelled"
    assert (await runner.result(other.session_id)).status == "cancelled"
    before = snapshot(runner.store, other.session_id)
    with pytest.raises(SessionStateError):
        await runner.resume(other.session_id, {"approve": {"approved": True}})
    assert snapshot(runner.store, other.session_id) == before
    [status] = [e for e in await runner.store.list_events(other.session_id) if e.status == "cancelled"]
    assert status.author == "carol"


async def test_cancel_stops_a_turn_in_flight() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    async def slow(node_input: Any) -> str:
        started.set()
        await asyncio.sleep(30)
        finished.append("slow")
        return "never"

    runner = Runner(Workflow(name="slow_wf", edges=[(START, slow)]))
    running = asyncio.create_task(runner.run("x", session_id="s1"))
    await started.wait()
    cancelled = await runner.cancel("s1", actor="ops")
    assert cancelled.status == "cancelled"
    assert (await running).status == "cancelled"
    assert finished == []
    kinds = [e.kind for e in await runner.store.list_events("s1")]
    assert kinds[-1] == "status" and "completed" not in kinds


async def test_stream_yields_events_as_they_are_committed(calls: dict[str, int]) -> None:
    runner = Runner(approval_workflow(calls))
    seen = [event async for event in runner.stream(5, session_id="streamed")]
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
    assert seen == await runner.store.list_events("streamed")
    assert seen[-1].kind == "status" and seen[-1].status == "waiting"
    resumed = [
        e async for e in runner.stream_resume("streamed", {"approve": {"approved": True}}, actor="dan")
    ]
    assert resumed[0].kind == "answer" and resumed[0].seq == seen[-1].seq + 1
    assert resumed[-1].status == "completed" and resumed[-1].output is None
    [carrier] = [e for e in resumed if e.seq == resumed[-1].output_seq]
    assert carrier.output == "approved" and "approval@1" in (carrier.output_for or [])


async def test_bare_long_running_tool_ids_are_resumable() -> None:
    seen: list[dict[str, Any]] = []

    @node(rerun_on_resume=True)
    async def tool(ctx: Any, node_input: Any):
        seen.append(dict(ctx.resume_inputs))
        if "fc-1" in ctx.resume_inputs:
            yield f"approved: {ctx.resume_inputs['fc-1']}"
            return
        yield Event(long_running_tool_ids={"fc-1"})

    runner = Runner(Workflow(name="tools", edges=[(START, tool)]))
    waiting = await runner.run(None)
    assert [i.id for i in waiting.interrupts] == ["fc-1"]
    assert waiting.interrupts[0].response_schema is None
    done = await runner.resume(waiting.session_id, {"fc-1": "yes"})
    assert (done.status, done.output) == ("completed", "approved: yes")
    assert seen == [{}, {"fc-1": "yes"}]


async def test_an_input_that_cannot_be_stored_is_refused_before_anything_is_written() -> None:
    store = InMemoryEventStore()
    runner = Runner(Workflow(name="any_input", edges=[(START, lambda_free_echo)]), store=store)
    with pytest.raises(CallerError) as raised:
        await runner.run(object(), session_id="never")
    assert isinstance(raised.value, ValueError) and "workflow input" in str(raised.value)
    with pytest.raises(UnknownSessionError):
        await store.get_session("never")


def lambda_free_echo(node_input: Any) -> Any:
    return node_input


async def test_a_node_annotated_to_return_an_event_routes_its_output() -> None:
    def b(node_input: int) -> Event:
        return Event(output=node_input + 1, route="go")

    def c(node_input: int) -> int:
        return node_input * 10

    result = await Runner(Workflow(name="annotated", edges=[(START, b, {"go": c})])).run(1)
    assert (result.status, result.output) == ("completed", 20)
