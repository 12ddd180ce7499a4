"""``Event(message=...)`` reaches the log, and public models refuse fields they do not have."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from engine import (
    START,
    BaseNode,
    Context,
    Edge,
    Event,
    FunctionNode,
    Interrupt,
    RequestInput,
    RetryConfig,
    Runner,
    Workflow,
    node,
)
from engine.errors import UnknownFieldError
from engine.events import Answer, ErrorInfo

from .builders import single


async def test_a_yielded_message_is_stored_as_a_message_event(read_log: Any) -> None:
    @node
    async def chatty(node_input: Any) -> AsyncGenerator[Any, None]:
        yield Event(message="Looking the order up")
        yield Event(output=node_input + 1, message="Found it")

    runner = Runner(single(chatty))
    result = await runner.run(1)

    assert result.status == "completed" and result.output == 2
    log = await read_log(runner, result.session_id)
    said = [(e.kind, e.message) for e in log.events if e.message is not None]
    assert said == [("message", "Looking the order up"), ("output", "Found it")]
    [first] = log.of_kind("message")
    assert first.node_path == "wf@1/chatty@1" and first.output is None and first.output_for is None


async def test_a_message_with_state_keeps_both(read_log: Any) -> None:
    @node
    async def noting(ctx: Context) -> AsyncGenerator[Any, None]:
        yield Event(message="saved a draft", state={"draft": 1})

    runner = Runner(single(noting))
    result = await runner.run()

    log = await read_log(runner, result.session_id)
    [event] = [e for e in log.events if e.message]
    assert (event.message, event.state) == ("saved a draft", {"draft": 1})


async def test_a_message_yielded_with_interrupt_ids_is_their_question() -> None:
    class Ask(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            if ctx.resume_inputs:
                yield ctx.resume_inputs["fc-1"]
                return
            yield Event(message="Approve the refund?", long_running_tool_ids=frozenset({"fc-1"}))

    runner = Runner(Workflow(name="wf", edges=[(START, Ask(name="ask"))]))
    result = await runner.run()

    assert result.status == "waiting"
    [asked] = result.interrupts
    assert (asked.id, asked.message) == ("fc-1", "Approve the refund?")
    assert (await runner.resume(result.session_id, {"fc-1": "yes"})).output == "yes"


async def test_a_message_survives_a_round_trip_through_json(read_log: Any) -> None:
    @node
    async def chatty(node_input: Any) -> AsyncGenerator[Any, None]:
        yield Event(message="hello")

    runner = Runner(single(chatty))
    result = await runner.run()
    log = await read_log(runner, result.session_id)
    for event in log.events:
        assert Event.model_validate(event.model_dump(mode="json")) == event


# -- unknown fields ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "model", "field"),
    [
        (lambda: Event(mesage="hi"), "Event", "mesage"),
        (lambda: Event(output=1, routes="a"), "Event", "routes"),
        (lambda: RequestInput(mesage="?"), "RequestInput", "mesage"),
        (lambda: RequestInput(schema=dict), "RequestInput", "schema"),
        (lambda: RetryConfig(attempts=3), "RetryConfig", "attempts"),
        (lambda: Interrupt(id="a", question="?"), "Interrupt", "question"),
        (lambda: Answer(interrupt_id="a", answer=1), "Answer", "answer"),
        (lambda: ErrorInfo(type="E", message="m", code=1), "ErrorInfo", "code"),
        (lambda: Edge(from_node=START, to_node=START, routes=["a"]), "Edge", "routes"),
        (lambda: FunctionNode(func=len, rerun_on_resum=True), "FunctionNode", "rerun_on_resum"),
        (lambda: Workflow(name="wf", edgs=[]), "Workflow", "edgs"),
    ],
)
def test_an_unknown_field_is_refused_naming_it(build: Any, model: str, field: str) -> None:
    with pytest.raises(UnknownFieldError) as caught:
        build()
    assert caught.value.model == model
    assert f"'{field}'" in str(caught.value)
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TypeError)


def test_an_unknown_field_in_data_read_back_is_refused_too() -> None:
    with pytest.raises(ValueError, match="mesage"):
        Event.model_validate({"kind": "message", "mesage": "hi"})


def test_a_node_subclass_keeps_its_own_fields_and_refuses_others() -> None:
    class Scored(BaseNode):
        threshold: int = 3

    assert Scored(name="s", threshold=5).threshold == 5
    with pytest.raises(UnknownFieldError, match="'treshold'"):
        Scored(name="s", treshold=5)


async def test_a_node_yielding_a_misspelt_event_fails_naming_the_field() -> None:
    @node
    async def typo(node_input: Any) -> AsyncGenerator[Any, None]:
        yield Event(mesage="hi")

    result = await Runner(single(typo)).run()

    assert result.status == "failed"
    assert result.error_type == "UnknownFieldError"
    assert "'mesage'" in (result.error or "") and "wf@1/typo@1" in (result.error or "")


@pytest.mark.parametrize(
    "data",
    [
        {},
        {"output": None},
        {"output": {"a": [1, 2]}, "route": "next"},
        {"route": True},
        {"route": 1},
        {"route": ["a", 1, False]},
        {"route": []},
        {"state": {"k": 1}},
        {"state": {}},
        {"message": "hi", "route": None},
        {"output": 1, "route": "a", "state": {"x": None}, "message": "m"},
        {"route": 1.5},  # refused by validation, as below
        {"long_running_tool_ids": {"t1"}},
        {"output": 3, "seq": 4},
    ],
)
def test_an_event_is_built_as_its_validator_would_build_it(data: dict[str, Any]) -> None:
    try:
        expected = Event.model_validate(dict(data))
    except Exception as refused:
        with pytest.raises(type(refused)):
            Event(**data)
        return
    made = Event(**data)
    assert made == expected
    assert made.model_dump(mode="json") == expected.model_dump(mode="json")
    assert made.model_fields_set == expected.model_fields_set


@pytest.mark.parametrize(
    "data",
    [{"route": 2.5}, {"route": ["a", None]}, {"state": {1: "x"}}, {"state": ["k"]}, {"message": 3}],
)
def test_an_event_with_a_wrong_type_is_refused(data: dict[str, Any]) -> None:
    with pytest.raises(ValueError):
        Event(**data)


def test_an_event_keeps_its_own_copy_of_state_and_routes() -> None:
    state, routes = {"k": 1}, ["a", "b"]
    event = Event(state=state, route=routes)
    state["k"] = 2
    routes.append("c")
    assert event.state == {"k": 1} and event.route == ["a", "b"]
