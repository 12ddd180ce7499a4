"""Issue 2, item 7: interrupts in graph nodes, answers and resuming."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel, Field

from engine import (
    START,
    BaseNode,
    Context,
    Event,
    FunctionNode,
    Interrupt,
    JoinNode,
    RequestInput,
    Runner,
    Workflow,
    node,
)
from engine.errors import (
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    NoAnswersError,
    SessionStateError,
    UnknownInterruptError,
    UnknownSessionError,
)


class Approval(BaseModel):
    approved: bool
    comment: str = ""


class Sink(BaseNode):
    """Records what it receives and outputs nothing."""

    seen: list[Any] = Field(default_factory=list)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        self.seen.append(node_input)
        return
        yield


def counted(name: str, calls: Any) -> FunctionNode:
    """A node that counts its executions and appends its name to its (string) input."""

    def run(node_input: Any) -> str:
        calls[name] += 1
        return f"{node_input}>{name}"

    return FunctionNode(run, name=name)


def asker(name: str, interrupt_id: str, calls: Any, **options: Any) -> FunctionNode:
    """A node that asks ``interrupt_id`` (rerun_on_resume=False: the answer is its output)."""

    def run(node_input: Any):  # type: ignore[no-untyped-def]
        calls[name] += 1
        yield RequestInput(message=f"{name} asks", interrupt_id=interrupt_id, **options)

    return FunctionNode(run, name=name)


# -- RequestInput ------------------------------------------------------------------------


async def test_request_input_pauses_the_run(read_log: Any, calls: Any) -> None:
    def review(node_input: str):  # type: ignore[no-untyped-def]
        calls["review"] += 1
        yield RequestInput(
            message="Approve this draft?",
            response_schema=Approval,
            payload={"draft": node_input},
            interrupt_id="review-1",
        )

    def publish(node_input: dict[str, Any]) -> str:
        calls["publish"] += 1
        return f"published={node_input['approved']} ({node_input['comment']})"

    runner = Runner(Workflow(name="wf", edges=[(START, counted("write", calls), review, publish)]))
    waiting = await runner.run("text")
    assert waiting.status == "waiting"
    assert waiting.output is None
    assert waiting.interrupts == [
        Interrupt(
            id="review-1",
            node_path="wf@1/review@1",
            message="Approve this draft?",
            payload={"draft": "text>write"},
            response_schema=Approval.model_json_schema(),
        )
    ]
    log = await read_log(runner, waiting.session_id)
    [asked] = log.of_kind("interrupt")
    assert asked.node_path == "wf@1/review@1"
    assert asked.interrupt == waiting.interrupts[0]
    assert log.status() == ["waiting"]
    assert (await runner.result(waiting.session_id)).interrupts == waiting.interrupts

    result = await runner.resume(
        waiting.session_id, {"review-1": {"approved": True, "comment": "ok"}}, actor="ann"
    )
    assert result.status == "completed"
    assert result.output == "published=True (ok)"
    assert calls == {"write": 1, "review": 1, "publish": 1}
    log = await read_log(runner, waiting.session_id)
    [answer] = log.of_kind("answer")
    assert answer.author == "ann"
    assert answer.answer is not None
    assert (answer.answer.interrupt_id, answer.answer.actor) == ("review-1", "ann")
    assert answer.answer.value == {"approved": True, "comment": "ok"}
    assert log.status() == ["waiting", "completed"]


async def test_request_input_without_an_id_gets_a_generated_one() -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(message="name?")

    runner = Runner(Workflow(name="wf", edges=[(START, ask)]))
    waiting = await runner.run(None)
    [interrupt] = waiting.interrupts
    assert interrupt.id
    other = await runner.run(None)
    assert other.interrupts[0].id != interrupt.id
    result = await runner.resume(waiting.session_id, {interrupt.id: "Bo"})
    assert result.output == "Bo"


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        (list[str], {"type": "array", "items": {"type": "string"}}),
        ({"type": "integer", "minimum": 1}, {"type": "integer", "minimum": 1}),
        (None, None),
    ],
)
async def test_response_schema_is_json_schema(schema: Any, expected: Any) -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q", response_schema=schema)

    waiting = await Runner(Workflow(name="wf", edges=[(START, ask)])).run(None)
    assert waiting.interrupts[0].response_schema == expected


# -- bare long_running_tool_ids ---------------------------------------------------------------


class SeedApprover(BaseNode):
    """Seed 000's interrupt example, verbatim in behaviour."""

    rerun_on_resume: bool = True
    runs: list[dict[str, Any]] = Field(default_factory=list)

    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        self.runs.append(dict(ctx.resume_inputs))
        if ctx.resume_inputs and "fc-1" in ctx.resume_inputs:
            yield f"approved: {ctx.resume_inputs['fc-1']}"
            return
        yield Event(long_running_tool_ids={"fc-1"})


async def test_bare_long_running_tool_ids_interrupt_is_resumable(read_log: Any) -> None:
    approver = SeedApprover(name="approver", runs=[])
    runner = Runner(Workflow(name="wf", edges=[(START, approver)]))
    waiting = await runner.run("x")
    assert waiting.status == "waiting"
    assert [(i.id, i.node_path) for i in waiting.interrupts] == [("fc-1", "wf@1/approver@1")]
    result = await runner.resume(waiting.session_id, {"fc-1": "yes"})
    assert result.status == "completed"
    assert result.output == "approved: yes"
    assert approver.runs == [{}, {"fc-1": "yes"}]
    log = await read_log(runner, waiting.session_id)
    assert log.started_count("/approver@1") == 2


async def test_bare_interrupt_with_several_ids_answered_one_by_one(calls: Any) -> None:
    class Pair(BaseNode):
        rerun_on_resume: bool = True

        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            calls["pair"] += 1
            missing = {"a", "b"} - set(ctx.resume_inputs)
            if missing:
                yield Event(long_running_tool_ids=missing)
                return
            yield f"{ctx.resume_inputs['a']}+{ctx.resume_inputs['b']}"

    runner = Runner(Workflow(name="wf", edges=[(START, Pair(name="pair"))]))
    waiting = await runner.run(None)
    assert sorted(i.id for i in waiting.interrupts) == ["a", "b"]
    half = await runner.resume(waiting.session_id, {"b": 2})
    assert half.status == "waiting"
    assert [i.id for i in half.interrupts] == ["a"]
    result = await runner.resume(waiting.session_id, {"a": 1})
    assert result.output == "1+2"
    assert calls["pair"] == 3


# -- other branches go on -----------------------------------------------------------------


async def test_run_waits_while_other_branches_finish(read_log: Any, calls: Any) -> None:
    join = JoinNode(name="join")
    wf = Workflow(
        name="wf",
        edges=[
            (START, asker("ask", "q1", calls), join),
            (START, counted("work", calls), counted("more_work", calls), join),
            (join, counted("end", calls)),
        ],
    )
    runner = Runner(wf)
    waiting = await runner.run("in")
    assert waiting.status == "waiting"
    assert [i.id for i in waiting.interrupts] == ["q1"]
    log = await read_log(runner, waiting.session_id)
    assert log.outputs()["wf@1/more_work@1"] == "in>work>more_work"
    assert "wf@1/join@1" not in log.started()

    result = await runner.resume(waiting.session_id, {"q1": "answered"})
    assert result.status == "completed"
    assert result.output == f"{ {'ask': 'answered', 'more_work': 'in>work>more_work'} }>end"
    assert calls == {"ask": 1, "work": 1, "more_work": 1, "end": 1}


async def test_answering_a_subset_of_pending_interrupts(calls: Any) -> None:
    join = JoinNode(name="join")
    wf = Workflow(
        name="wf",
        edges=[(START, (asker("a", "qa", calls), asker("b", "qb", calls), asker("c", "qc", calls)), join)],
    )
    runner = Runner(wf)
    waiting = await runner.run(None)
    assert [i.id for i in waiting.interrupts] == ["qa", "qb", "qc"]

    step = await runner.resume(waiting.session_id, {"qb": "B"})
    assert step.status == "waiting"
    assert [i.id for i in step.interrupts] == ["qa", "qc"]

    step = await runner.resume(waiting.session_id, {"qc": "C", "qa": "A"}, actor="bob")
    assert step.status == "completed"
    assert step.output == {"a": "A", "b": "B", "c": "C"}
    assert calls == {"a": 1, "b": 1, "c": 1}


async def test_answer_then_advance(read_log: Any, calls: Any) -> None:
    join = JoinNode(name="join")
    wf = Workflow(name="wf", edges=[(START, (asker("a", "qa", calls), asker("b", "qb", calls)), join)])
    runner = Runner(wf)
    waiting = await runner.run(None)

    assert await runner.answer(waiting.session_id, {"qa": 1}, actor="ann") is None
    still = await runner.result(waiting.session_id)
    assert still.status == "waiting"
    assert [i.id for i in still.interrupts] == ["qb"]
    log = await read_log(runner, waiting.session_id)
    assert log.kinds()[-1] == "answer"
    assert log.started_count("/a@1") == 1

    await runner.answer(waiting.session_id, {"qb": 2}, actor="bo")
    result = await runner.advance(waiting.session_id)
    assert result.status == "completed"
    assert result.output == {"a": 1, "b": 2}
    assert calls == {"a": 1, "b": 1}
    log = await read_log(runner, waiting.session_id)
    assert [(e.author, e.answer.interrupt_id) for e in log.of_kind("answer") if e.answer] == [
        ("ann", "qa"),
        ("bo", "qb"),
    ]


async def test_advance_with_nothing_answered_keeps_waiting(calls: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, counted("pre", calls), asker("ask", "q", calls))]))
    waiting = await runner.run("in")
    again = await runner.advance(waiting.session_id)
    assert again.status == "waiting"
    assert [i.id for i in again.interrupts] == ["q"]
    assert calls == {"pre": 1, "ask": 1}


# -- rerun_on_resume -----------------------------------------------------------------------


async def test_rerun_on_resume_true_reruns_with_resume_inputs(calls: Any) -> None:
    seen: list[dict[str, Any]] = []

    @node(rerun_on_resume=True)
    def confirm(ctx: Context, node_input: str):  # type: ignore[no-untyped-def]
        seen.append(dict(ctx.resume_inputs))
        if "ok" in ctx.resume_inputs:
            yield f"{node_input} confirmed by {ctx.resume_inputs['ok']}"
            return
        yield RequestInput(message="ok?", interrupt_id="ok")

    runner = Runner(
        Workflow(name="wf", edges=[(START, counted("pre", calls), confirm, counted("post", calls))])
    )
    waiting = await runner.run("in")
    result = await runner.resume(waiting.session_id, {"ok": "ann"})
    assert result.output == "in>pre confirmed by ann>post"
    assert seen == [{}, {"ok": "ann"}]
    assert calls == {"pre": 1, "post": 1}


async def test_resume_inputs_is_empty_not_none_before_an_answer() -> None:
    seen: list[Any] = []

    def look(ctx: Context, node_input: Any) -> str:
        seen.append(ctx.resume_inputs)
        return "ok"

    await Runner(Workflow(name="wf", edges=[(START, look)])).run(None)
    assert seen[0] is not None
    assert dict(seen[0]) == {}


async def test_rerun_on_resume_false_one_answer_is_the_output(read_log: Any, calls: Any) -> None:
    def after(node_input: Any) -> Any:
        calls["after"] += 1
        return {"got": node_input}

    runner = Runner(Workflow(name="wf", edges=[(START, asker("ask", "q", calls), after)]))
    waiting = await runner.run(None)
    result = await runner.resume(waiting.session_id, {"q": {"nested": [1, 2]}})
    assert result.output == {"got": {"nested": [1, 2]}}
    assert calls == {"ask": 1, "after": 1}
    log = await read_log(runner, waiting.session_id)
    assert log.started_count("/ask@1") == 1
    assert "wf@1/ask@1" not in log.outputs()  # as in ADK: the answer is no output event of its own


async def test_rerun_on_resume_false_several_answers_are_a_dict(calls: Any) -> None:
    def ask_two(node_input: Any):  # type: ignore[no-untyped-def]
        calls["ask_two"] += 1
        yield RequestInput(interrupt_id="first")
        yield RequestInput(interrupt_id="second")

    runner = Runner(Workflow(name="wf", edges=[(START, ask_two)]))
    waiting = await runner.run(None)
    assert [i.id for i in waiting.interrupts] == ["first", "second"]
    half = await runner.resume(waiting.session_id, {"second": 2})
    assert half.status == "waiting"
    assert calls["ask_two"] == 1
    result = await runner.resume(waiting.session_id, {"first": 1})
    assert result.output == {"first": 1, "second": 2}
    assert calls["ask_two"] == 1


async def test_interrupt_inside_a_nested_workflow(read_log: Any, calls: Any) -> None:
    inner = Workflow(
        name="inner", edges=[(START, counted("x", calls), asker("ask", "deep", calls), counted("y", calls))]
    )
    outer = Workflow(name="outer", edges=[(START, counted("before", calls), inner, counted("after", calls))])
    runner = Runner(outer)
    waiting = await runner.run("in")
    assert [(i.id, i.node_path) for i in waiting.interrupts] == [("deep", "outer@1/inner@1/ask@1")]
    result = await runner.resume(waiting.session_id, {"deep": "A"})
    assert result.status == "completed"
    assert result.output == "A>y>after"
    assert calls == {"before": 1, "x": 1, "ask": 1, "y": 1, "after": 1}
    log = await read_log(runner, waiting.session_id)
    [asked] = log.of_kind("interrupt")
    assert asked.author == "inner"


async def test_completed_nodes_never_reexecute_across_many_resumes(calls: Any) -> None:
    wf = Workflow(
        name="wf",
        edges=[
            (
                START,
                counted("a", calls),
                asker("q1", "one", calls),
                counted("b", calls),
                asker("q2", "two", calls),
                counted("c", calls),
            )
        ],
    )
    runner = Runner(wf)
    sid = (await runner.run("in")).session_id
    assert (await runner.resume(sid, {"one": "1"})).status == "waiting"
    result = await runner.resume(sid, {"two": "2"})
    assert result.output == "2>c"
    assert calls == {"a": 1, "q1": 1, "b": 1, "q2": 1, "c": 1}


# -- interrupt ids -------------------------------------------------------------------------------


async def test_interrupt_id_can_be_asked_again_after_an_answer(read_log: Any, calls: Any) -> None:
    def draft(node_input: Any) -> str:
        calls["draft"] += 1
        return f"draft {calls['draft']}"

    def review(node_input: str):  # type: ignore[no-untyped-def]
        calls["review"] += 1
        yield RequestInput(message=f"approve {node_input}?", interrupt_id="approval")

    def decide(ctx: Context, node_input: str) -> str:
        ctx.route = "approved" if node_input == "yes" else "rejected"
        return node_input

    def done(node_input: Any) -> str:
        return f"done after {calls['draft']} drafts"

    wf = Workflow(name="wf", edges=[(START, draft, review, decide, {"rejected": draft, "approved": done})])
    runner = Runner(wf)
    waiting = await runner.run(None)
    assert [(i.id, i.node_path) for i in waiting.interrupts] == [("approval", "wf@1/review@1")]

    again = await runner.resume(waiting.session_id, {"approval": "no"})
    assert again.status == "waiting"
    assert [(i.id, i.node_path, i.message) for i in again.interrupts] == [
        ("approval", "wf@1/review@2", "approve draft 2?")
    ]

    result = await runner.resume(waiting.session_id, {"approval": "yes"}, actor="ann")
    assert result.status == "completed"
    assert result.output == "done after 2 drafts"
    assert calls == {"draft": 2, "review": 2}
    log = await read_log(runner, waiting.session_id)
    assert [e.node_path for e in log.of_kind("answer")] == ["wf@1/review@1", "wf@1/review@2"]


async def test_a_rerun_node_may_ask_the_same_id_again(calls: Any) -> None:
    @node(rerun_on_resume=True)
    def pick_even(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        calls["pick_even"] += 1
        answer = ctx.resume_inputs.get("n")
        if answer is not None and answer % 2 == 0:
            yield answer
            return
        yield RequestInput(message="an even number, please", interrupt_id="n")

    runner = Runner(Workflow(name="wf", edges=[(START, pick_even)]))
    sid = (await runner.run(None)).session_id
    odd = await runner.resume(sid, {"n": 3})
    assert odd.status == "waiting"
    assert [i.id for i in odd.interrupts] == ["n"]
    result = await runner.resume(sid, {"n": 4})
    assert result.output == 4
    assert calls["pick_even"] == 3


async def test_duplicate_pending_interrupt_id_fails_naming_both_nodes(read_log: Any, calls: Any) -> None:
    join = JoinNode(name="join")
    wf = Workflow(
        name="wf", edges=[(START, (asker("left", "same", calls), asker("right", "same", calls)), join)]
    )
    runner = Runner(wf)
    result = await runner.run(None)
    assert result.status == "failed"
    assert "same" in result.error
    assert "left" in result.error and "right" in result.error
    log = await read_log(runner, result.session_id)
    assert len(log.errors()) == 1


# -- bad answers leave the log unchanged ------------------------------------------------------


async def _waiting_review() -> tuple[Runner, str]:
    def review(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="r", response_schema=Approval)

    runner = Runner(Workflow(name="wf", edges=[(START, review)]))
    return runner, (await runner.run(None)).session_id


async def test_invalid_answer_is_refused_with_field_errors(read_log: Any) -> None:
    runner, sid = await _waiting_review()
    before = (await read_log(runner, sid)).events
    with pytest.raises(InvalidAnswerError) as caught:
        await runner.resume(sid, {"r": {"approved": "perhaps"}})
    assert "approved" in caught.value.field_errors
    with pytest.raises(InvalidAnswerError) as caught:
        await runner.answer(sid, {"r": {"comment": "no verdict"}})
    assert "approved" in caught.value.field_errors
    assert (await read_log(runner, sid)).events == before
    assert (await runner.result(sid)).status == "waiting"


async def test_caller_errors_leave_the_log_unchanged(read_log: Any) -> None:
    runner, sid = await _waiting_review()
    before = (await read_log(runner, sid)).events
    with pytest.raises(UnknownInterruptError):
        await runner.resume(sid, {"nope": 1})
    with pytest.raises(NoAnswersError):
        await runner.resume(sid, {})
    with pytest.raises(UnknownSessionError):
        await runner.resume("no-such-session", {"r": {"approved": True}})
    assert (await read_log(runner, sid)).events == before

    await runner.answer(sid, {"r": {"approved": True}}, actor="ann")
    answered = (await read_log(runner, sid)).events
    with pytest.raises(InterruptAlreadyAnswered) as caught:
        await runner.resume(sid, {"r": {"approved": False}}, actor="bob")
    assert caught.value.answered_by == "ann"
    assert (await read_log(runner, sid)).events == answered
    for error in (UnknownInterruptError, NoAnswersError, UnknownSessionError, InterruptAlreadyAnswered):
        assert issubclass(error, ValueError)


async def test_duplicate_id_across_turns_fails_naming_both_nodes(read_log: Any, calls: Any) -> None:
    join = JoinNode(name="join")
    first, gate = asker("first", "shared", calls), asker("gate", "gate", calls)
    wf = Workflow(
        name="wf",
        edges=[(START, (first, gate)), (first, join), (gate, asker("second", "shared", calls), join)],
    )
    runner = Runner(wf)
    waiting = await runner.run(None)
    assert [i.id for i in waiting.interrupts] == ["shared", "gate"]
    result = await runner.resume(waiting.session_id, {"gate": "open"})
    assert result.status == "failed"
    assert "wf@1/first@1" in result.error and "wf@1/second@1" in result.error
    log = await read_log(runner, waiting.session_id)
    assert len(log.errors()) == 1


async def test_state_written_before_an_interrupt_rides_on_it(read_log: Any) -> None:
    def ask(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        ctx.state["asked"] = True
        yield RequestInput(interrupt_id="q")

    def after(ctx: Context, node_input: Any) -> Any:
        return [ctx.state["asked"], node_input]

    runner = Runner(Workflow(name="wf", edges=[(START, ask, after)]))
    waiting = await runner.run(None)
    log = await read_log(runner, waiting.session_id)
    [asked] = log.of_kind("interrupt")
    assert asked.state == {"asked": True}
    assert (await runner.resume(waiting.session_id, {"q": 1})).output == [True, 1]


class Order(BaseModel):
    item: str


async def test_a_model_output_reaches_a_join_successor_as_json_data_live_and_on_replay(calls: Any) -> None:
    def make(node_input: str) -> Order:
        calls["make"] += 1
        return Order(item=node_input)

    seen: list[Any] = []

    def combine(node_input: dict[str, Any]) -> str:
        seen.append(node_input["make"])
        return f"{node_input['make']['item']}:{node_input['ask']}"

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (make, asker("ask", "q", calls)), join, combine)]))
    waiting = await runner.run("pen")
    result = await runner.resume(waiting.session_id, {"q": "ok"})
    assert result.output == "pen:ok"
    assert calls["make"] == 1
    assert seen == [{"item": "pen"}]


@pytest.mark.parametrize(
    ("schema", "good", "bad", "field"),
    [
        (list[str], ["a", "b"], ["a", 1], "1"),
        (
            {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
            {"n": 2},
            {"m": 2},
            "n",
        ),
    ],
)
async def test_answers_are_checked_against_types_and_raw_schemas(
    schema: Any, good: Any, bad: Any, field: str, read_log: Any
) -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q", response_schema=schema)

    runner = Runner(Workflow(name="wf", edges=[(START, ask)]))
    sid = (await runner.run(None)).session_id
    before = (await read_log(runner, sid)).events
    with pytest.raises(InvalidAnswerError) as caught:
        await runner.resume(sid, {"q": bad})
    assert field in caught.value.field_errors
    assert (await read_log(runner, sid)).events == before
    assert (await runner.resume(sid, {"q": good})).output == good


async def test_an_answered_terminal_node_output_is_the_workflow_output(read_log: Any, calls: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, asker("ask", "q", calls))]))
    sid = (await runner.run(None)).session_id
    result = await runner.resume(sid, {"q": "the answer"})
    assert result.output == "the answer"
    log = await read_log(runner, sid)
    [event] = log.output_events()
    assert event.node_path == "wf@1/ask@1"
    assert event.output_for == ["wf@1/ask@1", "wf@1"]
    assert (await runner.result(sid)).output == "the answer"


async def test_only_the_answered_rerun_node_runs_again(calls: Any) -> None:
    def make(name: str) -> FunctionNode:
        def run(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
            calls[name] += 1
            if name in ctx.resume_inputs:
                yield f"{name}={ctx.resume_inputs[name]}"
                return
            yield RequestInput(interrupt_id=name)

        return FunctionNode(run, name=name, rerun_on_resume=True)

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (make("p"), make("q")), join)]))
    sid = (await runner.run(None)).session_id
    assert calls == {"p": 1, "q": 1}
    assert (await runner.resume(sid, {"q": 2})).status == "waiting"
    assert calls == {"p": 1, "q": 2}
    result = await runner.resume(sid, {"p": 1})
    assert result.output == {"p": "p=1", "q": "q=2"}
    assert calls == {"p": 2, "q": 2}


async def test_a_rerun_node_can_ask_one_question_after_another(calls: Any) -> None:
    @node(rerun_on_resume=True)
    def wizard(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        calls["wizard"] += 1
        answers = dict(ctx.resume_inputs)
        if "name" not in answers:
            yield RequestInput(message="name?", interrupt_id="name")
        elif "age" not in answers:
            yield RequestInput(message=f"age of {answers['name']}?", interrupt_id="age")
        else:
            yield f"{answers['name']} is {answers['age']}"

    runner = Runner(Workflow(name="wf", edges=[(START, wizard)]))
    sid = (await runner.run(None)).session_id
    second = await runner.resume(sid, {"name": "Ada"})
    assert [(i.id, i.message) for i in second.interrupts] == [("age", "age of Ada?")]
    result = await runner.resume(sid, {"age": 36})
    assert result.output == "Ada is 36"
    assert calls["wizard"] == 3


async def test_falsy_outputs_routes_and_answers_survive_replay(calls: Any) -> None:
    def zero(node_input: Any) -> int:
        calls["zero"] += 1
        return 0

    def gate(ctx: Context, node_input: Any) -> str:
        calls["gate"] += 1
        ctx.route = False
        return ""

    def never(node_input: Any) -> str:
        calls["never"] += 1
        return "wrong branch"

    join = JoinNode(name="join")
    ask = asker("ask", "q", calls)
    wf = Workflow(
        name="wf",
        edges=[(START, (zero, gate)), (gate, {False: ask, True: never}), (zero, join), (ask, join)],
    )
    runner = Runner(wf)
    waiting = await runner.run(None)
    assert [i.id for i in waiting.interrupts] == ["q"]
    result = await runner.resume(waiting.session_id, {"q": False})
    assert result.status == "completed"
    assert result.output == {"zero": 0, "ask": False}
    assert calls == {"zero": 1, "gate": 1, "ask": 1}


async def test_nodes_that_completed_without_output_are_not_rerun(read_log: Any, calls: Any) -> None:
    # Seed 000 interception case 7: a static node that completed with no output fast-forwards.
    # A rerun_on_resume=True node that completed is not rerun either: our log records its
    # completion (docs/engine.md records the reading of case 7).
    def quiet(node_input: Any) -> None:
        calls["quiet"] += 1

    @node(rerun_on_resume=True)
    def quiet_rerun(ctx: Context, node_input: Any) -> None:
        calls["quiet_rerun"] += 1
        ctx.state["seen"] = True

    runner = Runner(Workflow(name="wf", edges=[(START, quiet, quiet_rerun, asker("ask", "q", calls))]))
    sid = (await runner.run(None)).session_id
    result = await runner.resume(sid, {"q": "done"})
    assert result.output == "done"
    assert calls == {"quiet": 1, "quiet_rerun": 1, "ask": 1}
    log = await read_log(runner, sid)
    assert log.started_count("/quiet@1") == 1
    assert log.started_count("/quiet_rerun@1") == 1


async def test_interrupt_ids_are_read_only_and_list_what_the_node_asked() -> None:
    seen: list[Any] = []

    class Asker(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            with pytest.raises(AttributeError):
                ctx.interrupt_ids = frozenset({"x"})  # type: ignore[misc]
            yield RequestInput(interrupt_id="first")
            seen.append(set(ctx.interrupt_ids))

    waiting = await Runner(Workflow(name="wf", edges=[(START, Asker(name="asker"))])).run(None)
    assert waiting.status == "waiting"
    assert seen == [{"first"}]


async def test_a_failed_run_with_a_pending_interrupt(read_log: Any, calls: Any) -> None:
    broken = {"on": True}

    def flaky(node_input: Any) -> str:
        calls["flaky"] += 1
        if broken["on"]:
            raise RuntimeError("flaky is down")
        return "fixed"

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (asker("ask", "q", calls), flaky), join)]))
    failed = await runner.run(None)
    assert failed.status == "failed"
    assert "flaky is down" in failed.error

    broken["on"] = False
    retried = await runner.resume(failed.session_id, {})
    assert retried.status == "waiting"
    assert [i.id for i in retried.interrupts] == ["q"]
    assert calls == {"ask": 1, "flaky": 2}

    result = await runner.resume(failed.session_id, {"q": "answer"})
    assert result.output == {"ask": "answer", "flaky": "fixed"}
    assert calls == {"ask": 1, "flaky": 2}


async def test_resuming_a_failed_run_with_an_answer_retries_it_in_the_engine(calls: Any) -> None:
    """The engine's ``resume`` of a failed run is an explicit retry of its failed nodes, with the
    answers given (as ADK's resume): the caller asks for it. wfapp's answering service refuses an
    answer to a failed run's question instead ("the run failed at ...; retry it first",
    tests/api/test_failed_run_answers.py): a person answering a question is never a silent retry."""
    broken = {"on": True}

    def flaky(node_input: Any) -> str:
        calls["flaky"] += 1
        if broken["on"]:
            raise RuntimeError("down")
        return "fixed"

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (asker("ask", "q", calls), flaky), join)]))
    failed = await runner.run(None)
    broken["on"] = False
    result = await runner.resume(failed.session_id, {"q": "answer"})
    assert result.status == "completed"
    assert result.output == {"ask": "answer", "flaky": "fixed"}
    assert calls == {"ask": 1, "flaky": 2}


async def test_an_unstorable_payload_fails_the_asking_node(read_log: Any) -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q", payload=object())

    runner = Runner(Workflow(name="wf", edges=[(START, ask)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert "ask" in result.error
    log = await read_log(runner, result.session_id)
    assert log.of_kind("interrupt") == []
    assert [e.node_path for e in log.errors()] == ["wf@1/ask@1"]


async def test_an_invalid_response_schema_fails_the_asking_node(read_log: Any) -> None:
    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q", response_schema={"type": "no-such-type"})

    runner = Runner(Workflow(name="wf", edges=[(START, ask)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert "ask" in result.error
    log = await read_log(runner, result.session_id)
    assert log.of_kind("interrupt") == []


async def test_an_unstorable_answer_is_refused(read_log: Any, calls: Any) -> None:
    runner = Runner(Workflow(name="wf", edges=[(START, asker("ask", "q", calls))]))
    sid = (await runner.run(None)).session_id
    before = (await read_log(runner, sid)).events
    with pytest.raises(InvalidAnswerError):
        await runner.resume(sid, {"q": object()})
    assert (await read_log(runner, sid)).events == before


async def test_a_rerun_node_gets_its_original_input_when_branches_finished_out_of_order(
    read_log: Any,
) -> None:
    # b has two predecessors, so it runs twice. In the first turn the slow branch finishes
    # last, so b@1 runs on y's output and asks; x's trigger waits for b@1 to finish (issue 25
    # item 13), and b@2 runs on it after the answer. Replay must give b@1 the same input.
    async def x(node_input: Any) -> str:
        for _ in range(20):
            await asyncio.sleep(0)
        return "x"

    def y(node_input: Any) -> str:
        return "y"

    runs: list[tuple[str, Any]] = []

    @node(rerun_on_resume=True)
    def b(ctx: Context, node_input: str):  # type: ignore[no-untyped-def]
        runs.append((ctx.node_path, node_input))
        if node_input == "y" and "q" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="q")
            return
        yield f"{node_input}:{ctx.resume_inputs.get('q')}"

    sink = Sink(name="sink", seen=[])
    runner = Runner(Workflow(name="wf", edges=[(START, (x, y), b, sink)]))
    waiting = await runner.run(None)
    assert [(i.id, i.node_path) for i in waiting.interrupts] == [("q", "wf@1/b@1")]
    assert runs == [("wf@1/b@1", "y")]

    result = await runner.resume(waiting.session_id, {"q": "ok"})
    assert result.status == "completed", result.error
    assert runs[1:] == [("wf@1/b@1", "y"), ("wf@1/b@2", "x")]
    assert sorted(sink.seen) == ["x:None", "y:ok"]


async def test_a_rerun_replaces_the_output_of_the_interrupted_execution() -> None:
    # Execution 1 of n yields a draft output and asks; execution 2 (after the answer) ends
    # with no output. Live, the join gets None for n; a later replay must agree.
    @node(rerun_on_resume=True)
    def n(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        if "first" not in ctx.resume_inputs:
            yield "draft"
            yield RequestInput(interrupt_id="first")

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (n, asker_node("later")), join)]))
    sid = (await runner.run(None)).session_id
    assert (await runner.resume(sid, {"first": 1})).status == "waiting"
    result = await runner.resume(sid, {"later": 2})
    assert result.output == {"n": None, "later": 2}


def asker_node(interrupt_id: str) -> FunctionNode:
    def run(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id=interrupt_id)

    return FunctionNode(run, name=interrupt_id)


async def test_run_ids_of_a_re_triggered_node_stay_stable_across_three_turns() -> None:
    # Turn 1: x waits; slow y completes and triggers b@1, which asks qb.
    # Turn 2: x is answered; its trigger of b waits for b@1 (issue 25 item 13).
    # Turn 3: qb is answered; b@1 must re-run on y, then b@2 runs on x's answer.
    runs: list[tuple[str, Any, dict[str, Any]]] = []

    def x(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="qx")

    async def y(node_input: Any) -> str:
        for _ in range(20):
            await asyncio.sleep(0)
        return "y"

    @node(rerun_on_resume=True)
    def b(ctx: Context, node_input: str):  # type: ignore[no-untyped-def]
        runs.append((ctx.node_path, node_input, dict(ctx.resume_inputs)))
        if node_input == "y" and "qb" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="qb")
            return
        yield f"{node_input}:{ctx.resume_inputs.get('qb')}"

    sink = Sink(name="sink", seen=[])
    runner = Runner(Workflow(name="wf", edges=[(START, (x, y), b, sink)]))
    first = await runner.run(None)
    assert [(i.id, i.node_path) for i in first.interrupts] == [("qx", "wf@1/x@1"), ("qb", "wf@1/b@1")]
    second = await runner.resume(first.session_id, {"qx": "X"})
    assert [(i.id, i.node_path) for i in second.interrupts] == [("qb", "wf@1/b@1")]
    third = await runner.resume(first.session_id, {"qb": "B"})
    assert third.status == "completed", third.error
    assert runs == [
        ("wf@1/b@1", "y", {}),
        ("wf@1/b@1", "y", {"qb": "B"}),
        ("wf@1/b@2", "X", {}),
    ]
    assert sorted(sink.seen) == ["X:None", "y:B"]


async def test_a_rerun_node_that_finishes_without_its_other_question_withdraws_it(read_log: Any) -> None:
    @node(rerun_on_resume=True)
    def either(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        if ctx.resume_inputs:
            yield dict(ctx.resume_inputs)
            return
        yield RequestInput(interrupt_id="by_mail")
        yield RequestInput(interrupt_id="by_phone")

    runner = Runner(Workflow(name="wf", edges=[(START, either)]))
    sid = (await runner.run(None)).session_id
    result = await runner.resume(sid, {"by_phone": "yes"})
    assert result.status == "completed"
    assert result.output == {"by_phone": "yes"}
    assert (await runner.result(sid)).interrupts == []
    with pytest.raises((UnknownInterruptError, SessionStateError)):
        await runner.answer(sid, {"by_mail": "late"})


async def test_a_replayed_join_gives_back_its_predecessors_models_as_json_data() -> None:
    # As in ADK, a model output reaches successors as JSON data; a replay gives the same.
    def make(node_input: Any) -> Order:
        return Order(item="pen")

    def other(node_input: Any) -> str:
        return "o"

    seen: list[Any] = []

    @node(rerun_on_resume=True)
    def gate(ctx: Context, node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
        seen.append(node_input["make"])
        if "q" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="q")
            return
        yield node_input["make"]["item"]

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (make, other), join, gate)]))
    sid = (await runner.run(None)).session_id
    result = await runner.resume(sid, {"q": 1})
    assert result.status == "completed", result.error
    assert result.output == "pen"
    assert seen == [{"item": "pen"}, {"item": "pen"}]


async def test_an_answer_that_becomes_the_output_takes_the_declared_output_type() -> None:
    # rerun_on_resume=False: the answer is the node's output, so its return annotation applies,
    # the same live (turn 2) as on replay (turn 3).
    def approve(node_input: Any) -> Approval:
        return RequestInput(interrupt_id="a", response_schema=Approval)  # type: ignore[return-value]

    seen: list[Any] = []

    @node(rerun_on_resume=True)
    def after(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        seen.append(node_input)
        if "q" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="q")
            return
        yield "ok"

    runner = Runner(Workflow(name="wf", edges=[(START, approve, after)]))
    sid = (await runner.run(None)).session_id
    assert (await runner.resume(sid, {"a": {"approved": True}})).status == "waiting"
    result = await runner.resume(sid, {"q": "go"})
    assert result.output == "ok"
    # validated into Approval, it reaches the successor as JSON data (defaults filled)
    assert seen == [{"approved": True, "comment": ""}, {"approved": True, "comment": ""}]


async def test_answers_are_all_or_nothing(read_log: Any) -> None:
    def ask_two(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="free")
        yield RequestInput(interrupt_id="typed", response_schema=Approval)

    runner = Runner(Workflow(name="wf", edges=[(START, ask_two)]))
    sid = (await runner.run(None)).session_id
    before = (await read_log(runner, sid)).events
    with pytest.raises(UnknownInterruptError):
        await runner.resume(sid, {"free": 1, "nope": 2})
    with pytest.raises(InvalidAnswerError):
        await runner.resume(sid, {"free": 1, "typed": {"approved": "maybe"}})
    with pytest.raises(InvalidAnswerError):
        await runner.answer(sid, {"free": 1, "typed": {}})
    assert (await read_log(runner, sid)).events == before
    assert [i.id for i in (await runner.result(sid)).interrupts] == ["free", "typed"]


async def test_a_replayed_join_keeps_a_nested_workflows_model_output_as_json_data() -> None:
    def make(node_input: Any) -> Order:
        return Order(item="pen")

    def other(node_input: Any) -> str:
        return "o"

    seen: list[Any] = []

    @node(rerun_on_resume=True)
    def gate(ctx: Context, node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
        seen.append(node_input["inner"])
        if "q" not in ctx.resume_inputs:
            yield RequestInput(interrupt_id="q")
            return
        yield node_input["inner"]["item"]

    inner = Workflow(name="inner", edges=[(START, make)])
    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (inner, other), join, gate)]))
    sid = (await runner.run(None)).session_id
    result = await runner.resume(sid, {"q": 1})
    assert result.status == "completed", result.error
    assert result.output == "pen"
    assert seen == [{"item": "pen"}, {"item": "pen"}]
