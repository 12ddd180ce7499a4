"""One limit for every value written to the log: what the engine accepts, the log reads back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import TypeAdapter

from engine import START, Event, InMemoryEventStore, RequestInput, Runner, Workflow, limits, node
from engine.errors import ConfigurationError, UnreadableLogError, ValueLimitError

LOG = TypeAdapter(list[Event])
DEPTH = limits.DEFAULT_MAX_DEPTH


def nest(depth: int, leaf: Any = None) -> Any:
    """A value nested ``depth`` levels deep: ``[]`` is one level, ``[[]]`` two."""
    value: Any = [] if leaf is None else [leaf]
    for _ in range(depth - 1):
        value = [value]
    return value


def read_back(store: InMemoryEventStore, session_id: str) -> list[Event]:
    """The log as a reader of the stored JSON sees it (the Django store parses it this way)."""
    text = "[" + ",".join(e.model_dump_json() for e in store._logs[session_id].events) + "]"
    return LOG.validate_json(text)


@pytest.fixture(autouse=True)
def default_limits() -> Iterator[None]:
    previous = limits.configure()
    yield
    limits.configure(
        max_depth=previous.max_depth,
        max_input_bytes=previous.max_input_bytes,
        max_value_bytes=previous.max_value_bytes,
    )


# -- the readers: the limit stays below every one of them ----------------------------------------


def test_the_deepest_allowed_value_reads_back_in_every_place_of_an_event() -> None:
    deepest = nest(limits.READABLE_DEPTH)
    events = [
        Event(kind="output", output=deepest),
        Event(kind="state", state={"k": nest(limits.READABLE_DEPTH - 1)}),
        Event(kind="answer", answer={"interrupt_id": "i", "value": deepest}),
        Event(kind="interrupt", interrupt={"id": "i", "payload": deepest}),
    ]
    text = "[" + ",".join(e.model_dump_json() for e in events) + "]"
    assert LOG.validate_json(text) == events
    assert json.loads(text)[0]["output"] == deepest
    db = sqlite3.connect(":memory:")
    merged = db.execute("SELECT json_patch(?, json_object('seq', 1))", (events[2].model_dump_json(),))
    assert json.loads(merged.fetchone()[0])["answer"]["value"] == deepest


def test_the_log_parser_refuses_values_past_its_own_limit_so_the_limit_is_needed() -> None:
    too_deep = Event(kind="output", output=nest(205)).model_dump_json()
    with pytest.raises(ValueError, match="recursion limit"):
        LOG.validate_json(f"[{too_deep}]")


def test_a_depth_limit_past_what_the_readers_take_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="between 1 and 190"):
        limits.configure(max_depth=limits.READABLE_DEPTH + 1)
    with pytest.raises(ConfigurationError, match="positive"):
        limits.configure(max_input_bytes=0)


# -- callers: the start input and answers ------------------------------------------------------------


@node(rerun_on_resume=False)
async def ask(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="q", message="Anything?", response_schema={"type": "array"})


def echo(node_input: Any) -> Any:
    return node_input


asking = Workflow(name="asking", edges=[(START, ask, echo)])


async def waiting_run() -> tuple[Runner, InMemoryEventStore, str]:
    store = InMemoryEventStore()
    runner = Runner(asking, store=store)
    result = await runner.run(None)
    assert result.status == "waiting"
    return runner, store, result.session_id


async def test_an_answer_nested_too_deep_is_refused_and_nothing_is_written() -> None:
    runner, store, session_id = await waiting_run()
    before = await store.list_events(session_id)
    with pytest.raises(ValueLimitError) as refused:
        await runner.answer(session_id, {"q": nest(250)})
    assert refused.value.rule == "depth" and refused.value.found == 250 and refused.value.limit == DEPTH
    assert "The answer is nested 250 levels deep" in str(refused.value)
    assert await store.list_events(session_id) == before


async def test_an_answer_at_the_limit_is_taken_and_the_run_reads_back() -> None:
    runner, store, session_id = await waiting_run()
    result = await runner.resume(session_id, {"q": nest(DEPTH)})
    assert result.status == "completed" and result.output == nest(DEPTH)
    assert [e.output for e in read_back(store, session_id) if e.output is not None][-1] == nest(DEPTH)


@pytest.mark.parametrize(
    ("value", "rule", "field"),
    [
        pytest.param(["a\x00b"], "character", "0", id="nul"),
        pytest.param([{"k\x00": 1}], "character", "0.k\x00", id="nul-key"),
        pytest.param(["\ud800"], "character", "0", id="surrogate"),
        pytest.param(["x" * (limits.DEFAULT_MAX_INPUT_BYTES + 1)], "size", "", id="size"),
    ],
)
async def test_answers_the_log_cannot_keep_are_refused(value: Any, rule: str, field: str) -> None:
    runner, store, session_id = await waiting_run()
    before = await store.list_events(session_id)
    with pytest.raises(ValueLimitError) as refused:
        await runner.answer(session_id, {"q": value})
    assert (refused.value.rule, refused.value.field) == (rule, field)
    assert "\x00" not in str(refused.value)  # the message itself can be stored and shown
    assert await store.list_events(session_id) == before


async def test_a_start_input_too_deep_creates_no_session() -> None:
    store = InMemoryEventStore()
    with pytest.raises(ValueLimitError, match="The workflow input is nested 20000 levels deep"):
        await Runner(asking, store=store).run(nest(20_000), session_id="s")
    assert store._logs == {}


# -- nodes: outputs, state, payloads and messages fail the node, naming it ------------------------


def deep_output(node_input: Any) -> Any:
    return {"tree": nest(DEPTH + 5)}


def deep_state(ctx: Any, node_input: Any) -> Any:
    ctx.state["tree"] = nest(DEPTH)
    return "ok"


@node(rerun_on_resume=False)
async def nul_message(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="q", message="bad\x00message")


@node(rerun_on_resume=False)
async def deep_payload(node_input: Any):  # type: ignore[no-untyped-def]
    yield RequestInput(interrupt_id="q", payload=nest(DEPTH + 1))


def nul_output(node_input: Any) -> Any:
    return "bad\x00output"


@pytest.mark.parametrize(
    ("step", "name", "words"),
    [
        (node(deep_output, name="deep_output"), "deep_output", "The output of node w@1/deep_output@1 is nested 70"),
        (node(deep_state, name="deep_state"), "deep_state", "The state written by node w@1/deep_state@1 is nested 65"),
        (nul_message, "nul_message", "The message asked by node w@1/nul_message@1 contains a NUL"),
        (deep_payload, "deep_payload", "The payload of the interrupt asked by node w@1/deep_payload@1 is nested 65"),
        (node(nul_output, name="nul_output"), "nul_output", "The output of node w@1/nul_output@1 contains a NUL"),
    ],
)  # fmt: skip
async def test_a_node_value_the_log_cannot_keep_fails_the_node(step: Any, name: str, words: str) -> None:
    store = InMemoryEventStore()
    result = await Runner(Workflow(name="w", edges=[(START, step)]), store=store).run(None)
    assert result.status == "failed"
    assert words in (result.error or "")
    assert f"w@1/{name}@1" in (result.error or "")
    log = read_back(store, result.session_id)  # the failure itself is readable
    assert log[-1].status == "failed"


async def test_a_node_value_over_the_size_limit_fails_the_node() -> None:
    limits.configure(max_value_bytes=1000)
    result = await Runner(Workflow(name="w", edges=[(START, node(lambda x: "y" * 2000, name="big"))])).run(
        None
    )
    assert result.status == "failed"
    assert "The output of node w@1/big@1 is 2 KB of JSON; the limit is 1000 bytes" in (result.error or "")


async def test_an_exception_message_with_a_nul_is_kept_escaped() -> None:
    def breaks(node_input: Any) -> Any:
        raise RuntimeError("bad byte \x00 here")

    store = InMemoryEventStore()
    result = await Runner(Workflow(name="w", edges=[(START, node(breaks, name="breaks"))]), store=store).run(
        None
    )
    assert result.status == "failed" and "bad byte \\u0000 here" in (result.error or "")
    assert "\x00" not in read_back(store, result.session_id)[-1].model_dump_json()


# -- a log that cannot be read fails its run visibly ---------------------------------------------------


class ForgetfulStore(InMemoryEventStore):
    """A store whose stored log no longer parses (as rows written before the limit existed)."""

    def __init__(self) -> None:
        super().__init__()
        self.broken: set[str] = set()

    async def list_events(self, session_id: str, after_seq: int = 0) -> list[Event]:
        if session_id in self.broken and after_seq == 0:
            raise UnreadableLogError(session_id, "Invalid JSON: recursion limit exceeded", 3)
        return await super().list_events(session_id, after_seq)


async def test_advancing_a_run_whose_log_cannot_be_read_fails_it_with_the_reason() -> None:
    store = ForgetfulStore()
    runner = Runner(asking, store=store)
    session_id = (await Runner(asking, store=store).run(None)).session_id
    last = len(await store.list_events(session_id))
    store.broken = {session_id}
    # Another process's runner: this one never read the log (the first keeps what it folded).
    result = await runner.advance(session_id)
    assert result.status == "failed" and result.error_type == "UnreadableLogError"
    assert "could not be read at event 3: Invalid JSON: recursion limit exceeded" in (result.error or "")
    assert (await store.get_session(session_id)).status == "failed"
    final = (await store.list_events(session_id, after_seq=last))[-1]
    assert (final.seq, final.status) == (last + 1, "failed")
    refused = runner.answer(session_id, {"q": [1]})
    with pytest.raises(ValueError, match="could not be read"):
        await refused
    assert (await runner.cancel(session_id)).status == "cancelled"  # it can still be ended


# -- property: whatever the engine accepts, the log reads back -------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
texts = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=20)


@settings(max_examples=150, deadline=None)
@given(
    value=json_values
    | st.builds(nest, st.integers(1, 260))
    | st.builds(nest, st.integers(1, 80), texts)
    | st.dictionaries(texts, texts, max_size=3)
)
def test_what_the_limits_accept_round_trips_through_the_log(value: Any) -> None:
    try:
        limits.check_input(value, "The answer")
    except ValueLimitError as refused:
        assert refused.rule in ("depth", "size", "character") and str(refused)
        return
    event = Event(kind="answer", answer={"interrupt_id": "i", "value": value})
    assert LOG.validate_json("[" + event.model_dump_json() + "]")[0].answer == event.answer


@settings(max_examples=300, deadline=None)
@given(
    value=st.lists(json_values, min_size=3, max_size=6)
    | st.dictionaries(texts, json_values, min_size=3, max_size=6)
    | st.lists(st.integers() | st.floats() | texts, min_size=3, max_size=40),
    max_depth=st.integers(1, 8),
    max_bytes=st.integers(8, 400),
)
def test_a_value_judged_by_its_json_text_is_one_the_walk_accepts(
    value: Any, max_depth: int, max_bytes: int
) -> None:
    # The shortcut for larger values may send a value on to the walk, never let one through it refuses.
    found = limits.find_breach(value, max_depth=max_depth, max_bytes=max_bytes)
    assert found == limits.walk(value, max_depth=max_depth, max_bytes=max_bytes)
