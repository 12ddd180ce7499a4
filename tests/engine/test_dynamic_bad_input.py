"""Bad input to dynamic workflows: broken run_node rules, bad values, and caller errors."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel

from engine import Context, InMemoryEventStore, RequestInput, Runner, node
from engine.errors import InterruptAlreadyAnswered, InvalidAnswerError, NodeUsageError, UnknownInterruptError

from .builders import single

# -- uncaught, a refused call fails the run naming the node and the rule ------------------------


async def test_numeric_custom_run_id_fails_the_run_naming_node_and_rule(store: InMemoryEventStore) -> None:
    @node
    def process(node_input: Any) -> Any:
        return node_input

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        return await ctx.run_node(process, 1, run_id="42")

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert '"42"' in (result.error or "")
    assert "process" in (result.error or "")
    assert "non-numeric" in (result.error or "")


async def test_custom_run_id_with_a_path_separator_fails_the_run(store: InMemoryEventStore) -> None:
    @node
    def process(node_input: Any) -> Any:
        return node_input

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        return await ctx.run_node(process, 1, run_id="a/b")

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert "a/b" in (result.error or "") and "process" in (result.error or "")


async def test_second_use_as_output_fails_the_run_naming_node_and_rule(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def worker(node_input: Any) -> Any:
        calls["worker"] += 1
        return node_input

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context) -> None:
        await ctx.run_node(worker, 1, use_as_output=True)
        await ctx.run_node(worker, 2, use_as_output=True)

    result = await Runner(single(delegator), store=store).run()

    assert result.status == "failed"
    assert "wf@1/delegator@1" in (result.error or "")
    assert "use_as_output" in (result.error or "")
    assert calls["worker"] == 1


async def test_run_node_from_a_node_without_rerun_on_resume_fails_the_run(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def child(node_input: Any) -> str:
        calls["child"] += 1
        return "child"

    @node
    async def orch(ctx: Context) -> str:
        return await ctx.run_node(child)

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert "wf@1/orch@1" in (result.error or "")
    assert "rerun_on_resume" in (result.error or "")
    assert calls["child"] == 0


async def test_run_node_without_rerun_on_resume_fails_the_run_even_inside_except_exception(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def child(node_input: Any) -> str:
        calls["child"] += 1
        return "child"

    @node
    async def orch(ctx: Context) -> str:
        try:
            return await ctx.run_node(child)
        except Exception:
            return "swallowed"

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"  # a resume could never re-acquire the child's result
    assert "wf@1/orch@1" in (result.error or "") and "rerun_on_resume" in (result.error or "")
    assert calls["child"] == 0


# -- refused calls raise a ValueError at the call; the node may catch it and go on ---------------


async def test_a_caught_numeric_run_id_leaves_the_child_unrun_and_the_node_goes_on(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def process(node_input: Any) -> Any:
        calls[f"process {node_input}"] += 1
        return node_input

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        try:
            ctx.run_node(process, "numeric", run_id="42")
        except ValueError as error:
            assert isinstance(error, NodeUsageError)
            refused = str(error)
        return [refused, await ctx.run_node(process, "auto")]

    runner = Runner(single(orch), store=store)
    result = await runner.run()

    assert result.status == "completed"
    assert '"42"' in result.output[0] and "non-numeric" in result.output[0]
    assert result.output[1] == "auto"
    assert calls == Counter({"process auto": 1})
    paths = [e.node_path for e in await store.list_events(result.session_id)]
    assert "wf@1/orch@1/process@1" in paths and not any("@42" in p for p in paths)


async def test_a_caught_second_use_as_output_keeps_the_first_delegation(
    calls: Counter[str], store: InMemoryEventStore
) -> None:
    @node
    def worker(node_input: Any) -> Any:
        calls[f"worker {node_input}"] += 1
        return node_input

    @node(rerun_on_resume=True)
    async def delegator(ctx: Context) -> Any:
        await ctx.run_node(worker, "first", use_as_output=True)
        try:
            ctx.run_node(worker, "second", use_as_output=True)
        except ValueError as error:
            assert "use_as_output" in str(error) and "wf@1/delegator@1" in str(error)
        return "own output, ignored after delegating"

    result = await Runner(single(delegator), store=store).run()

    assert (result.status, result.output) == ("completed", "first")
    assert calls == Counter({"worker first": 1})


async def test_caught_refusals_are_the_same_on_replay(calls: Counter[str], store: InMemoryEventStore) -> None:
    @node
    def worker(node_input: Any) -> Any:
        calls["worker"] += 1
        return node_input

    @node
    async def approve(node_input: Any) -> AsyncGenerator[Any, None]:
        calls["approve"] += 1
        yield RequestInput(interrupt_id="ok", message="ok?")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        calls["orch"] += 1
        refused = []
        for call in (
            lambda: ctx.run_node(worker, 1, run_id="7"),
            lambda: ctx.run_node(worker, 2, use_as_output=True),
            lambda: ctx.run_node(worker, 3, use_as_output=True),
        ):
            try:
                pending = call()
            except NodeUsageError as error:
                refused.append(type(error).__name__)
            else:
                await pending
        answer = await ctx.run_node(approve)
        return [refused, answer]

    runner = Runner(single(orch), store=store)
    first = await runner.run()
    assert first.status == "waiting"
    done = await runner.resume(first.session_id, {"ok": "yes"})

    assert (done.status, done.output) == ("completed", 2)  # the first delegation is the output
    assert calls == Counter({"orch": 2, "worker": 1, "approve": 1})


async def test_a_caught_second_ctx_output_keeps_the_first(store: InMemoryEventStore) -> None:
    @node
    async def twice(ctx: Context) -> None:
        ctx.output = "first"
        try:
            ctx.output = "second"
        except ValueError as error:
            assert "output already set" in str(error)

    result = await Runner(single(twice), store=store).run()

    assert (result.status, result.output) == ("completed", "first")


async def test_two_children_asking_the_same_pending_interrupt_id_fail_the_run_naming_both(
    store: InMemoryEventStore,
) -> None:
    @node
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(interrupt_id="shared")

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        return list(await asyncio.gather(ctx.run_node(ask, 1), ctx.run_node(ask, 2)))

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert "shared" in (result.error or "")
    assert "wf@1/orch@1/ask@1" in (result.error or "")
    assert "wf@1/orch@1/ask@2" in (result.error or "")


# -- bad values fail the node that made them ----------------------------------------------------


async def test_child_output_that_cannot_be_stored_fails_the_child_naming_it_and_the_type(
    store: InMemoryEventStore,
) -> None:
    class Opaque:
        pass

    @node
    def make(node_input: Any) -> Any:
        return Opaque()

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> Any:
        return await ctx.run_node(make)

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert "wf@1/orch@1/make@1" in (result.error or "")
    assert "Opaque" in (result.error or "")


class Order(BaseModel):
    order_id: str
    quantity: int


async def test_child_input_that_does_not_match_its_model_fails_the_run_naming_node_and_field(
    store: InMemoryEventStore,
) -> None:
    @node
    def process_order(node_input: Order) -> int:
        return node_input.quantity

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[int]:
        good = await ctx.run_node(process_order, {"order_id": "A7", "quantity": "2"})
        bad = await ctx.run_node(process_order, {"order_id": "B8", "quantity": "lots"})
        return [good, bad]

    result = await Runner(single(orch), store=store).run()

    assert result.status == "failed"
    assert "process_order" in (result.error or "")
    assert "quantity" in (result.error or "")


# -- caller errors leave the log unchanged -----------------------------------------------------


class Approval(BaseModel):
    approved: bool
    note: str = ""


async def waiting_on_two(store: InMemoryEventStore) -> tuple[Runner, str]:
    @node
    async def ask(node_input: str) -> AsyncGenerator[Any, None]:
        yield RequestInput(message=node_input, interrupt_id=node_input, response_schema=Approval)

    @node(rerun_on_resume=True)
    async def orch(ctx: Context) -> list[Any]:
        return list(await asyncio.gather(ctx.run_node(ask, "first"), ctx.run_node(ask, "second")))

    runner = Runner(single(orch), store=store)
    result = await runner.run()
    assert result.status == "waiting"
    return runner, result.session_id


async def snapshot(store: InMemoryEventStore, session_id: str) -> tuple[Any, str]:
    return store.dump(session_id)["events"], (await store.get_session(session_id)).status


async def test_unknown_interrupt_id_raises_and_leaves_the_log_unchanged(store: InMemoryEventStore) -> None:
    runner, session_id = await waiting_on_two(store)
    before = await snapshot(store, session_id)

    with pytest.raises(UnknownInterruptError):
        await runner.resume(session_id, {"first": {"approved": True}, "nope": {"approved": True}})

    assert await snapshot(store, session_id) == before


async def test_already_answered_interrupt_raises_and_leaves_the_log_unchanged(
    store: InMemoryEventStore,
) -> None:
    runner, session_id = await waiting_on_two(store)
    partial = await runner.resume(session_id, {"first": {"approved": True}}, actor="alice")
    assert [i.id for i in partial.interrupts] == ["second"]
    before = await snapshot(store, session_id)

    with pytest.raises(InterruptAlreadyAnswered) as raised:
        await runner.resume(session_id, {"first": {"approved": False}}, actor="bob")

    assert raised.value.answered_by == "alice"
    assert await snapshot(store, session_id) == before


async def test_invalid_answer_raises_with_field_errors_and_leaves_the_log_unchanged(
    store: InMemoryEventStore,
) -> None:
    runner, session_id = await waiting_on_two(store)
    before = await snapshot(store, session_id)

    with pytest.raises(InvalidAnswerError) as raised:
        await runner.resume(session_id, {"first": {"approved": True}, "second": {"approved": "maybe"}})

    assert "approved" in raised.value.field_errors
    assert await snapshot(store, session_id) == before
    result = await runner.resume(session_id, {"first": {"approved": True}, "second": {"approved": False}})
    assert result.output == [{"approved": True}, {"approved": False}]
