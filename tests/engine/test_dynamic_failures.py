"""Failures in dynamic workflows: failing children, retries, timeouts, detached tasks, cancellation."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

from engine import Context, Event, InMemoryEventStore, RequestInput, RetryConfig, Runner, Workflow, node

from .builders import single


async def test_failing_child_fails_its_caller_and_the_run(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def broken(node_input: Any) -> None:
        calls["broken"] += 1
        raise KeyError("missing sku")

    @node
    def never(node_input: Any) -> None:
        calls["never"] += 1

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> None:
        calls["orch"] += 1
        await ctx.run_node(broken)
        await ctx.run_node(never)

    runner = Runner(Workflow(name="wf", edges=[("START", orch, never)]), store=store)
    result = await runner.run()

    assert result.status == "failed"
    assert result.error_type == "KeyError"
    assert "missing sku" in (result.error or "")
    assert "wf@1/orch@1/broken@1" in (result.error or "")
    assert calls == {"orch": 1, "broken": 1}
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/orch@1/broken@1"]


async def test_caller_that_catches_a_failing_child_carries_on(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    def broken(node_input: Any) -> None:
        calls["broken"] += 1
        raise KeyError("missing sku")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        try:
            await ctx.run_node(broken)
        except KeyError as error:
            return f"fallback after {error}"
        return "unreachable"

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.status == "completed"
    assert result.output == "fallback after 'missing sku'"
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/orch@1/broken@1"]


async def test_resume_after_a_failed_child_re_runs_only_that_child(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def a(node_input: Any) -> str:
        calls["a"] += 1
        return "a"

    @node
    def b(node_input: Any) -> str:
        calls["b"] += 1
        if calls["b"] == 1:
            raise TimeoutError("slow service")
        return "b"

    @node
    def c(node_input: Any) -> str:
        calls["c"] += 1
        return "c"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        calls["orch"] += 1
        parts = [await ctx.run_node(a)]
        parts += await asyncio.gather(ctx.run_node(b), ctx.run_node(c))
        return "".join(parts)

    runner = Runner(single(orch), store=store)
    failed = await runner.run()
    assert failed.status == "failed"
    assert calls == {"orch": 1, "a": 1, "b": 1, "c": 1}

    result = await runner.resume(failed.session_id, {})
    assert result.output == "abc"
    assert calls == {"orch": 2, "a": 1, "b": 2, "c": 1}


async def test_retry_of_a_failed_child_is_not_deferred_by_a_waiting_sibling(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def flaky(node_input: Any) -> str:
        calls["flaky"] += 1
        if calls["flaky"] == 1:
            raise ConnectionError("flaky")
        return "fixed"

    @node
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["ask"] += 1
        yield RequestInput(interrupt_id="q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        calls["orch"] += 1
        return list(await asyncio.gather(ctx.run_node(flaky), ctx.run_node(ask)))

    runner = Runner(single(orch), store=store)
    failed = await runner.run()
    assert failed.status == "failed"

    retried = await runner.resume(failed.session_id, {})
    assert retried.status == "waiting"
    assert calls == {"orch": 2, "flaky": 2, "ask": 1}

    result = await runner.resume(failed.session_id, {"q": "ok"})
    assert result.output == ["fixed", "ok"]
    assert calls == {"orch": 3, "flaky": 2, "ask": 1}


async def test_child_failing_after_a_sibling_interrupted_in_gather_fails_the_run(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["ask"] += 1
        yield RequestInput(interrupt_id="q")

    @node
    async def slow_fail(node_input: Any) -> str:
        calls["slow_fail"] += 1
        await asyncio.sleep(0.01)
        if calls["slow_fail"] == 1:
            raise ConnectionError("lost the connection")
        return "recovered"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        calls["orch"] += 1
        return list(await asyncio.gather(ctx.run_node(ask), ctx.run_node(slow_fail)))

    runner = Runner(single(orch), store=store)
    failed = await runner.run()

    assert failed.status == "failed"  # the caller never caught the failure
    assert failed.error_type == "ConnectionError"
    assert "wf@1/orch@1/slow_fail@1" in (failed.error or "")

    retried = await runner.resume(failed.session_id, {})
    assert retried.status == "waiting"
    assert calls == {"orch": 2, "ask": 1, "slow_fail": 2}
    result = await runner.resume(failed.session_id, {"q": "ok"})
    assert result.output == ["ok", "recovered"]


async def test_retry_config_applies_to_dynamic_children(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    @node(retry_config=RetryConfig(max_attempts=3, initial_delay=0.001, jitter=0))
    def wobbly(ctx: Context, node_input: Any) -> int:
        calls["wobbly"] += 1
        if ctx.attempt_count < 3:
            raise ConnectionError(f"attempt {ctx.attempt_count}")
        return ctx.attempt_count

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> int:
        return await ctx.run_node(wobbly)

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.output == 3
    assert calls["wobbly"] == 3
    log = await read_log(runner, result.session_id)
    assert [e.node_path for e in log.errors()] == ["wf@1/orch@1/wobbly@1"] * 2


async def test_detached_child_that_interrupts_fails_the_run_naming_the_node(
    store: InMemoryEventStore,
) -> None:
    @node
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(interrupt_id="q")

    @node
    async def slow(node_input: Any) -> str:
        await asyncio.sleep(0.01)
        return "slow"

    tasks: list[asyncio.Task[Any]] = []

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        tasks.append(asyncio.create_task(ctx.run_node(ask)))  # never awaited
        return await ctx.run_node(slow)

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert result.error_type == "RuntimeError"
    assert "wf@1/orch@1" in (result.error or "")
    assert "ask@1" in (result.error or "")


async def test_detached_child_that_interrupts_after_its_caller_returned_fails_the_run(
    store: InMemoryEventStore,
) -> None:
    @node
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(interrupt_id="q")

    tasks: list[asyncio.Task[Any]] = []

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        tasks.append(asyncio.create_task(ctx.run_node(ask)))  # never awaited
        return "returned at once"

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert result.error_type == "RuntimeError"
    assert "wf@1/orch@1" in (result.error or "")
    assert "ask@1" in (result.error or "")


async def test_failed_path_met_again_in_the_same_turn_raises_again_without_running(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def broken(node_input: Any) -> None:
        calls["broken"] += 1
        raise LookupError("gone")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[str]:
        seen = []
        for _ in range(2):
            try:
                await ctx.run_node(broken, run_id="same")
            except LookupError as error:
                seen.append(str(error))
        return seen

    result = await Runner(single(orch), store=store).run()

    assert result.output == ["gone", "gone"]
    assert calls["broken"] == 1


async def test_dynamic_child_timeout_fails_the_caller(store: InMemoryEventStore, read_log: Any) -> None:
    @node(timeout=0.01)
    async def sleepy(node_input: Any) -> str:
        await asyncio.sleep(5)
        return "late"

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        return await ctx.run_node(sleepy)

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.status == "failed"
    assert result.error_type == "NodeTimeoutError"
    assert "timed out" in (result.error or "")
    assert [e.node_path for e in (await read_log(runner, result.session_id)).errors()] == [
        "wf@1/orch@1/sleepy@1"
    ]


async def test_failure_the_caller_handled_in_gather_does_not_override_a_siblings_interrupt(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def broken(node_input: Any) -> str:
        calls["broken"] += 1
        raise LookupError("no such record")

    @node
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["ask"] += 1
        yield RequestInput(interrupt_id="q")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        calls["orch"] += 1
        looked_up, answered = await asyncio.gather(
            ctx.run_node(broken), ctx.run_node(ask), return_exceptions=True
        )
        if isinstance(answered, BaseException):
            raise answered  # the interrupt propagates; the lookup failure was handled below
        return ["n/a" if isinstance(looked_up, LookupError) else looked_up, answered]

    runner = Runner(single(orch), store=store)
    first = await runner.run()

    assert first.status == "waiting", first.error  # the caller caught the failure
    assert [i.id for i in first.interrupts] == ["q"]
    result = await runner.resume(first.session_id, {"q": "ok"})
    assert result.output == ["n/a", "ok"]
    assert calls == {"orch": 2, "broken": 2, "ask": 1}


async def test_child_that_asked_and_then_failed_leaves_no_pending_question(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    async def ask_then_fail(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["ask_then_fail"] += 1
        yield RequestInput(interrupt_id="orphan")
        raise ValueError("changed my mind")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> str:
        try:
            return await ctx.run_node(ask_then_fail)
        except ValueError:
            return "handled"

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.status == "completed"
    assert result.output == "handled"
    assert (await runner.result(result.session_id)).interrupts == []


async def test_orchestrator_retry_attempt_reuses_children_completed_in_the_same_turn(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def fetch(node_input: int) -> int:
        calls[f"fetch{node_input}"] += 1
        return node_input * 10

    @node(rerun_on_resume=True, retry_config=RetryConfig(max_attempts=3, initial_delay=0.001, jitter=0))
    async def orch(ctx: Context) -> list[int]:
        calls["orch"] += 1
        values = list(await asyncio.gather(*(ctx.run_node(fetch, i) for i in range(3))))
        if ctx.attempt_count < 2:
            raise ConnectionError("could not save")
        return values

    result = await Runner(single(orch), store=store).run()

    assert result.output == [0, 10, 20]
    assert calls == {"orch": 2, "fetch0": 1, "fetch1": 1, "fetch2": 1}


async def test_orchestrator_timeout_fails_the_run_and_a_retry_re_runs_the_unfinished_children(
    calls: Counter[str], store: InMemoryEventStore, read_log: Any
) -> None:
    delays = {"slow": 60.0}  # cut by the timeout; the timeout is long enough for `quick` on a loaded machine

    @node
    async def quick(node_input: Any) -> str:
        calls["quick"] += 1
        return "quick"

    @node
    async def slow(node_input: Any) -> str:
        calls["slow"] += 1
        await asyncio.sleep(delays["slow"])
        return "slow"

    @node(rerun_on_resume=True, timeout=1.0)
    async def orch(ctx: Context) -> list[str]:
        calls["orch"] += 1
        first = await ctx.run_node(quick)
        return [first, *await asyncio.gather(ctx.run_node(slow), ctx.run_node(slow))]

    runner = Runner(single(orch), store=store)
    failed = await runner.run()
    assert failed.status == "failed"
    assert failed.error_type == "NodeTimeoutError"
    assert "orch" in (failed.error or "")
    log = await read_log(runner, failed.session_id)
    assert "wf@1/orch@1/slow@2" not in log.outputs()

    delays["slow"] = 0.0
    result = await runner.resume(failed.session_id, {})

    assert result.output == ["quick", "slow", "slow"]
    assert calls == {"orch": 2, "quick": 1, "slow": 4}


async def test_orchestrator_timeout_while_children_are_writing_fails_the_run_cleanly(
    calls: Counter[str], slow_store: InMemoryEventStore
) -> None:
    limit = {"steps": 10_000}

    @node
    async def chatty(node_input: int) -> AsyncGenerator[Any, None]:
        calls["chatty"] += 1
        for step in range(limit["steps"]):
            yield Event(state={f"progress{node_input}": step})
        yield node_input

    # 10,000 slow appends a child take 20 s: the first run times out mid-append; the resumed
    # one (2 steps) ends well inside the limit, even on a loaded machine.
    @node(rerun_on_resume=True, timeout=1.0)
    async def orch(ctx: Context) -> list[int]:
        return list(await asyncio.gather(ctx.run_node(chatty, 1), ctx.run_node(chatty, 2)))

    runner = Runner(single(orch), store=slow_store)
    failed = await runner.run()  # the timeout cancels children mid-append; nothing may escape run()

    assert failed.status == "failed"
    assert failed.error_type == "NodeTimeoutError"

    limit["steps"] = 2
    result = await runner.resume(failed.session_id, {})
    assert result.output == [1, 2]


async def test_cancel_stops_every_child_and_nothing_is_appended_after_the_cancelled_status(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    release = asyncio.Event()  # set after the cancel: a child left running would finish then

    @node
    async def child(node_input: Any) -> Any:
        calls["started"] += 1
        await release.wait()
        calls["finished"] += 1
        return node_input

    tasks: list[asyncio.Task[Any]] = []

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        tasks.append(asyncio.create_task(ctx.run_node(child, "detached")))  # breaks rule 3
        return list(await asyncio.gather(ctx.run_node(child, 1), ctx.run_node(child, 2)))

    runner = Runner(single(orch), store=store)
    running = asyncio.create_task(runner.run(session_id="to-cancel"))
    while calls["started"] < 3:
        await asyncio.sleep(0.001)

    cancelled = await runner.cancel("to-cancel")
    await running
    release.set()
    await asyncio.sleep(0.1)  # give any straggler the time to finish and write

    assert cancelled.status == "cancelled"
    events = await store.list_events("to-cancel")
    assert events[-1].kind == "status" and events[-1].status == "cancelled"
    assert calls["finished"] == 0
