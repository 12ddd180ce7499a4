"""Issue 2, item 6: retries, timeouts, failed runs and retrying a failed run."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from engine import (
    START,
    Context,
    Event,
    FunctionNode,
    InMemoryEventStore,
    JoinNode,
    NodeTimeoutError,
    RequestInput,
    RetryConfig,
    Runner,
    Workflow,
    node,
)
from engine.errors import SessionStateError, UnknownInterruptError

FAST = {"initial_delay": 0, "jitter": 0}


class Flaky(Exception):
    pass


class FlakyChild(Flaky):
    pass


class Fatal(Exception):
    pass


def one_step(step: Any) -> Workflow:
    return Workflow(name="wf", edges=[(START, step)])


# -- RetryConfig ---------------------------------------------------------------------------


def test_retry_config_fields_default_to_none() -> None:
    config = RetryConfig()
    assert (
        config.max_attempts,
        config.initial_delay,
        config.max_delay,
        config.backoff_factor,
        config.jitter,
        config.exceptions,
    ) == (None, None, None, None, None, None)


def test_retry_delay_uses_adk_defaults_without_jitter() -> None:
    config = RetryConfig(jitter=0)
    # 1 s initial delay, doubled each attempt, capped at 60 s.
    assert [config.delay(attempt) for attempt in range(1, 9)] == [1, 2, 4, 8, 16, 32, 60, 60]


def test_retry_delay_with_explicit_settings() -> None:
    config = RetryConfig(initial_delay=0.5, backoff_factor=3, max_delay=4, jitter=0)
    assert [config.delay(attempt) for attempt in (1, 2, 3)] == [0.5, 1.5, 4]


def test_retry_delay_jitter_stays_within_bounds() -> None:
    config = RetryConfig(initial_delay=1, jitter=0.5)
    delays = [config.delay(1) for _ in range(200)]
    assert all(0.5 <= d <= 1.5 for d in delays)
    assert len(set(delays)) > 1


async def test_default_policy_makes_five_attempts(calls: Any, read_log: Any) -> None:
    @node(retry_config=RetryConfig(**FAST))
    def always_fails(ctx: Context, node_input: Any) -> Any:
        calls[ctx.attempt_count] += 1
        raise Flaky(f"attempt {ctx.attempt_count}")

    runner = Runner(one_step(always_fails))
    result = await runner.run(None)
    assert result.status == "failed"
    assert result.error_type == "Flaky"
    assert "attempt 5" in result.error
    assert calls == {1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
    log = await read_log(runner, result.session_id)
    # One error event per failed attempt (as google-adk does), all at the node's path.
    assert [e.node_path for e in log.errors()] == ["wf@1/always_fails@1"] * 5


async def test_attempt_count_counts_from_one_and_success_ends_the_retries(read_log: Any) -> None:
    seen: list[int] = []

    @node(retry_config=RetryConfig(max_attempts=4, **FAST))
    def third_time_lucky(ctx: Context, node_input: Any) -> str:
        seen.append(ctx.attempt_count)
        if ctx.attempt_count < 3:
            raise Flaky("not yet")
        return f"ok on {ctx.attempt_count}"

    runner = Runner(one_step(third_time_lucky))
    result = await runner.run(None)
    assert result.status == "completed"
    assert result.output == "ok on 3"
    assert seen == [1, 2, 3]
    log = await read_log(runner, result.session_id)
    assert len(log.errors()) == 2
    assert log.outputs() == {"wf@1/third_time_lucky@1": "ok on 3"}


async def test_attempt_count_is_one_without_retries() -> None:
    def f(ctx: Context, node_input: Any) -> int:
        return ctx.attempt_count

    assert (await Runner(one_step(f)).run(None)).output == 1


@pytest.mark.parametrize("max_attempts", [0, 1])
async def test_max_attempts_zero_or_one_means_no_retry(max_attempts: int, calls: Any) -> None:
    @node(retry_config=RetryConfig(max_attempts=max_attempts, **FAST))
    def fails(node_input: Any) -> Any:
        calls["fails"] += 1
        raise Flaky("no")

    result = await Runner(one_step(fails)).run(None)
    assert result.status == "failed"
    assert calls["fails"] == 1


@pytest.mark.parametrize(
    ("exceptions", "raised", "attempts"),
    [
        ([Flaky], Flaky, 3),
        ([Flaky], FlakyChild, 3),
        (["Flaky"], Flaky, 3),
        (["Flaky"], FlakyChild, 3),  # names match against the MRO
        (["FlakyChild"], Flaky, 1),
        ([Flaky], Fatal, 1),
        (["Fatal", Flaky], Fatal, 3),
        ([], Flaky, 1),
    ],
)
async def test_exception_filters_by_class_and_name(
    exceptions: list[Any], raised: type[Exception], attempts: int, calls: Any
) -> None:
    @node(retry_config=RetryConfig(max_attempts=3, exceptions=exceptions, **FAST))
    def fails(node_input: Any) -> Any:
        calls["fails"] += 1
        raise raised("boom")

    result = await Runner(one_step(fails)).run(None)
    assert result.status == "failed"
    assert result.error_type == raised.__name__
    assert calls["fails"] == attempts


# -- timeouts ------------------------------------------------------------------------------


async def test_timeout_raises_node_timeout_error(read_log: Any) -> None:
    @node(timeout=0.01)
    async def hangs(node_input: Any) -> Any:
        await asyncio.Event().wait()

    runner = Runner(one_step(hangs))
    result = await runner.run(None)
    assert result.status == "failed"
    assert result.error_type == "NodeTimeoutError"
    assert "timed out" in result.error
    assert "hangs" in result.error
    log = await read_log(runner, result.session_id)
    [error] = log.errors()
    assert error.node_path == "wf@1/hangs@1"
    assert error.error is not None and error.error.type == "NodeTimeoutError"


def test_node_timeout_error_message() -> None:
    error = NodeTimeoutError(node_name="slow", timeout=2.5)
    assert str(error) == "Node 'slow' timed out after 2.5 seconds."


async def test_timeouts_are_retried(calls: Any) -> None:
    @node(timeout=0.01, retry_config=RetryConfig(max_attempts=3, exceptions=[NodeTimeoutError], **FAST))
    async def slow_then_fast(ctx: Context, node_input: Any) -> str:
        calls["runs"] += 1
        if ctx.attempt_count < 3:
            await asyncio.Event().wait()
        return "made it"

    result = await Runner(one_step(slow_then_fast)).run(None)
    assert result.status == "completed"
    assert result.output == "made it"
    assert calls["runs"] == 3


async def test_a_timeout_does_not_cut_a_fast_node() -> None:
    @node(timeout=30)
    async def quick(node_input: Any) -> str:
        return "quick"

    assert (await Runner(one_step(quick)).run(None)).output == "quick"


# -- failed runs ------------------------------------------------------------------------------


async def test_node_exception_fails_the_run(read_log: Any, calls: Any) -> None:
    def before(node_input: Any) -> str:
        return "fine"

    def explode(node_input: Any) -> Any:
        raise Fatal("the disk is on fire")

    def after(node_input: Any) -> Any:
        calls["after"] += 1
        return node_input

    runner = Runner(Workflow(name="wf", edges=[(START, before, explode, after)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert result.error_type == "Fatal"
    assert "the disk is on fire" in result.error
    assert "explode" in result.error
    assert result.output is None
    assert calls["after"] == 0
    log = await read_log(runner, result.session_id)
    [error] = log.errors()
    assert error.node_path == "wf@1/explode@1"
    assert error.error is not None
    assert error.error.type == "Fatal" and "the disk is on fire" in error.error.message
    assert "wf@1/after@1" not in log.started()
    assert log.status() == ["failed"]
    stored = await runner.result(result.session_id)
    assert (stored.status, stored.error_type) == ("failed", "Fatal")
    assert "the disk is on fire" in stored.error


async def test_failure_in_a_nested_workflow_writes_one_error_event(read_log: Any) -> None:
    def explode(node_input: Any) -> Any:
        raise Fatal("inner trouble")

    inner = Workflow(name="inner", edges=[(START, explode)])
    runner = Runner(Workflow(name="outer", edges=[(START, inner)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert result.error_type == "Fatal"
    assert "inner trouble" in result.error
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["outer@1/inner@1/explode@1"]


# -- retrying a failed run ---------------------------------------------------------------------


async def test_resume_with_no_answers_reruns_only_the_failed_node(read_log: Any, calls: Any) -> None:
    broken = {"on": True}

    def first(node_input: str) -> str:
        calls["first"] += 1
        return node_input + ">first"

    def flaky(node_input: str) -> str:
        calls["flaky"] += 1
        if broken["on"]:
            raise Flaky("temporarily down")
        return node_input + ">flaky"

    def last(node_input: str) -> str:
        calls["last"] += 1
        return node_input + ">last"

    wf = Workflow(name="wf", edges=[(START, first, flaky, last)])
    runner = Runner(wf)
    failed = await runner.run("in")
    assert failed.status == "failed"
    assert calls == {"first": 1, "flaky": 1}

    broken["on"] = False
    result = await runner.resume(failed.session_id, {})
    assert result.status == "completed"
    assert result.output == "in>first>flaky>last"
    assert calls == {"first": 1, "flaky": 2, "last": 1}
    log = await read_log(runner, failed.session_id)
    assert log.started_count("/first@1") == 1
    assert log.started_count("/flaky@1") == 2
    assert log.status() == ["failed", "completed"]
    assert (await runner.result(failed.session_id)).output == "in>first>flaky>last"


async def test_retry_after_failure_in_a_parallel_branch(calls: Any) -> None:
    broken = {"on": True}

    def steady(node_input: str) -> str:
        calls["steady"] += 1
        return "steady"

    def shaky(node_input: str) -> str:
        calls["shaky"] += 1
        if broken["on"]:
            raise Flaky("down")
        return "shaky"

    def report(node_input: dict[str, Any]) -> str:
        calls["report"] += 1
        return f"{node_input['steady']}+{node_input['shaky']}"

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (steady, shaky), join, report)]))
    failed = await runner.run("in")
    assert failed.status == "failed"
    broken["on"] = False
    result = await runner.resume(failed.session_id, {})
    assert result.output == "steady+shaky"
    assert calls == {"steady": 1, "shaky": 2, "report": 1}


async def test_retry_a_failed_run_from_a_loaded_log(calls: Any) -> None:
    broken = {"on": True}

    def first(node_input: str) -> str:
        calls["first"] += 1
        return "one"

    def second(node_input: str) -> str:
        calls["second"] += 1
        if broken["on"]:
            raise Flaky("down")
        return node_input + "+two"

    wf = Workflow(name="wf", edges=[(START, first, second)])
    store = InMemoryEventStore()
    failed = await Runner(wf, store=store).run("in")
    broken["on"] = False
    fresh = Runner(wf, store=InMemoryEventStore.load(store.dump(failed.session_id)))
    result = await fresh.resume(failed.session_id, {})
    assert result.output == "one+two"
    assert calls == {"first": 1, "second": 2}


async def test_a_completed_run_cannot_be_resumed(read_log: Any) -> None:
    runner = Runner(one_step(FunctionNode(lambda node_input: "x", name="f")))
    done = await runner.run(None)
    before = (await read_log(runner, done.session_id)).events
    with pytest.raises(SessionStateError):
        await runner.resume(done.session_id, {})
    assert (await read_log(runner, done.session_id)).events == before


async def test_a_retried_node_gives_the_output_of_its_successful_attempt(read_log: Any) -> None:
    @node(retry_config=RetryConfig(max_attempts=2, **FAST))
    def unsteady(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        yield f"attempt {ctx.attempt_count}"
        if ctx.attempt_count == 1:
            raise Flaky("after yielding")

    def after(node_input: str) -> str:
        return f"after {node_input}"

    runner = Runner(Workflow(name="wf", edges=[(START, unsteady, after)]))
    result = await runner.run(None)
    assert result.status == "completed"
    assert result.output == "after attempt 2"


async def test_state_written_by_a_failed_attempt_through_ctx_is_discarded() -> None:
    @node(retry_config=RetryConfig(max_attempts=2, **FAST))
    def unsteady(ctx: Context, node_input: Any) -> str:
        ctx.state[f"attempt_{ctx.attempt_count}"] = True
        if ctx.attempt_count == 1:
            raise Flaky("first attempt")
        return "ok"

    def after(ctx: Context, node_input: Any) -> list[str]:
        return sorted(ctx.state)

    result = await Runner(Workflow(name="wf", edges=[(START, unsteady, after)])).run(None)
    assert result.output == ["attempt_2"]


async def test_retry_a_failed_run_inside_a_loop(read_log: Any, calls: Any) -> None:
    broken = {"on": True}

    def a(node_input: Any) -> int:
        calls["a"] += 1
        return (node_input or 0) + 1

    def b(ctx: Context, node_input: int) -> int:
        calls["b"] += 1
        if node_input == 2 and broken["on"]:
            raise Flaky("second lap")
        ctx.route = "again" if node_input < 3 else "done"
        return node_input

    def c(node_input: int) -> str:
        calls["c"] += 1
        return f"laps {node_input}"

    runner = Runner(Workflow(name="wf", edges=[(START, a, b, {"again": a, "done": c})]))
    failed = await runner.run(None)
    assert failed.status == "failed"
    assert calls == {"a": 2, "b": 2}
    log = await read_log(runner, failed.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/b@2"]

    broken["on"] = False
    result = await runner.resume(failed.session_id, {})
    assert result.output == "laps 3"
    assert calls == {"a": 3, "b": 4, "c": 1}
    log = await read_log(runner, failed.session_id)
    assert log.started_count("/a@1") == 1 and log.started_count("/b@1") == 1
    assert log.started_count("/a@2") == 1 and log.started_count("/b@2") == 2


async def test_retry_a_failed_node_inside_a_nested_workflow(read_log: Any, calls: Any) -> None:
    broken = {"on": True}

    def x(node_input: str) -> str:
        calls["x"] += 1
        return node_input + ">x"

    def explode(node_input: str) -> str:
        calls["explode"] += 1
        if broken["on"]:
            raise Flaky("inner")
        return node_input + ">fixed"

    def before(node_input: str) -> str:
        calls["before"] += 1
        return node_input + ">before"

    inner = Workflow(name="inner", edges=[(START, x, explode)])
    runner = Runner(Workflow(name="outer", edges=[(START, before, inner)]))
    failed = await runner.run("in")
    assert failed.status == "failed"
    broken["on"] = False
    result = await runner.resume(failed.session_id, {})
    assert result.status == "completed"
    assert result.output == "in>before>x>fixed"
    assert calls == {"before": 1, "x": 1, "explode": 2}


async def test_retry_gives_the_failed_node_its_original_input(read_log: Any) -> None:
    # b runs once per predecessor; the fast branch y triggers b@1 first in the first turn.
    # Retrying must run b@1 again on y's output, not on x's (see engine bug #3).
    async def x(node_input: Any) -> str:
        for _ in range(20):
            await asyncio.sleep(0)
        return "x"

    def y(node_input: Any) -> str:
        return "y"

    broken = {"on": True}
    runs: list[tuple[str, Any]] = []

    def b(ctx: Context, node_input: str) -> None:
        runs.append((ctx.node_path, node_input))
        if node_input == "y" and broken["on"]:
            raise Flaky("y's run of b fails once")
        ctx.state[f"b_{node_input}"] = True

    runner = Runner(Workflow(name="wf", edges=[(START, (x, y), b)]))
    failed = await runner.run(None)
    assert failed.status == "failed"
    assert runs[0] == ("wf@1/b@1", "y")
    done = len(runs)
    broken["on"] = False
    result = await runner.resume(failed.session_id, {})
    assert result.status == "completed", result.error
    assert ("wf@1/b@1", "y") in runs[done:]
    assert ("wf@1/b@1", "x") not in runs
    assert (await read_log(runner, failed.session_id)).state() == {"b_x": True, "b_y": True}


async def test_a_failed_attempts_output_and_route_do_not_survive_into_replay(calls: Any) -> None:
    # Turn 1: n yields an output and a route, then fails. Turn 2 (retry): n completes with
    # neither, so only m runs and the run waits at ask. Turn 3 replays n: it must fast-forward
    # with what its completed execution recorded (nothing), not the failed attempt's values.
    turn = {"n": 1}
    seen: list[tuple[str, Any]] = []

    def n(node_input: Any):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if turn["n"] == 1:
            yield Event(output="stale", route="left")
            raise Flaky("first attempt")

    def left(node_input: Any) -> None:
        seen.append(("left", node_input))

    def m(node_input: Any) -> None:
        seen.append(("m", node_input))

    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q")

    runner = Runner(Workflow(name="wf", edges=[(START, n, {"left": left}), (n, m, ask)]))
    failed = await runner.run(None)
    assert failed.status == "failed"
    turn["n"] = 2
    waiting = await runner.resume(failed.session_id, {})
    assert waiting.status == "waiting"
    assert seen == [("m", None)]
    result = await runner.resume(failed.session_id, {"q": "done"})
    assert result.status == "completed"
    assert result.output == "done"
    assert seen == [("m", None)]
    assert calls["n"] == 2


async def test_a_retried_attempts_stale_output_does_not_survive_into_replay() -> None:
    seen: list[Any] = []

    @node(retry_config=RetryConfig(max_attempts=2, **FAST))
    def n(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        if ctx.attempt_count == 1:
            yield "stale"
            raise Flaky("first attempt")

    def m(node_input: Any) -> None:
        seen.append(node_input)

    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q")

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (n, ask), join)]))
    waiting = await runner.run(None)
    assert waiting.status == "waiting"
    result = await runner.resume(waiting.session_id, {"q": "done"})
    # n's completed execution had no output: the join sees None for it, in both turns.
    assert result.output == {"n": None, "ask": "done"}


async def test_an_interrupt_asked_by_a_failed_attempt_is_not_left_pending(read_log: Any) -> None:
    @node(retry_config=RetryConfig(max_attempts=2, **FAST))
    def n(ctx: Context, node_input: Any):  # type: ignore[no-untyped-def]
        if ctx.attempt_count == 1:
            yield RequestInput(interrupt_id="abandoned")
            raise Flaky("first attempt")
        yield "ok"

    def ask(node_input: Any):  # type: ignore[no-untyped-def]
        yield RequestInput(interrupt_id="q")

    join = JoinNode(name="join")
    runner = Runner(Workflow(name="wf", edges=[(START, (n, ask), join)]))
    waiting = await runner.run(None)
    assert waiting.status == "waiting"
    # n completed on its second attempt: only ask is waiting.
    assert [i.id for i in waiting.interrupts] == ["q"]
    before = (await read_log(runner, waiting.session_id)).events
    with pytest.raises(UnknownInterruptError):
        await runner.resume(waiting.session_id, {"abandoned": "too late"})
    assert (await read_log(runner, waiting.session_id)).events == before
    result = await runner.resume(waiting.session_id, {"q": 1})
    assert result.status == "completed"
    assert result.output == {"n": "ok", "ask": 1}


async def test_a_nested_workflow_with_a_retry_policy_reruns_only_its_failed_child(calls: Any) -> None:
    def first(node_input: str) -> str:
        calls["first"] += 1
        return node_input + ">first"

    def flaky(node_input: str) -> str:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise Flaky("once")
        return node_input + ">flaky"

    inner = Workflow(
        name="inner", edges=[(START, first, flaky)], retry_config=RetryConfig(max_attempts=2, **FAST)
    )
    result = await Runner(Workflow(name="outer", edges=[(START, inner)])).run("in")
    assert result.status == "completed", result.error
    assert result.output == "in>first>flaky"
    assert calls == {"first": 1, "flaky": 2}


async def test_a_nested_workflow_timeout(read_log: Any) -> None:
    async def hangs(node_input: Any) -> Any:
        await asyncio.Event().wait()

    inner = Workflow(name="inner", edges=[(START, hangs)], timeout=0.01)
    runner = Runner(Workflow(name="outer", edges=[(START, inner)]))
    result = await runner.run(None)
    assert result.status == "failed"
    assert result.error_type == "NodeTimeoutError"
    assert "inner" in result.error
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["outer@1/inner@1"]


async def test_a_failed_run_withdraws_the_failed_nodes_question_until_it_asks_again(calls: Any) -> None:
    broken = {"on": True}

    def n(node_input: Any):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        yield RequestInput(interrupt_id="q")
        if broken["on"]:
            raise Flaky("after asking")

    runner = Runner(Workflow(name="wf", edges=[(START, n)]))
    failed = await runner.run(None)
    assert failed.status == "failed"
    with pytest.raises(UnknownInterruptError):
        await runner.answer(failed.session_id, {"q": "early"})
    broken["on"] = False
    waiting = await runner.resume(failed.session_id, {})
    assert [i.id for i in waiting.interrupts] == ["q"]
    result = await runner.resume(failed.session_id, {"q": "now"})
    assert result.output == "now"
    assert calls["n"] == 2
