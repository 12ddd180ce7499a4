"""Answers given while a turn executes are taken up without re-running nodes in flight."""

from __future__ import annotations

import asyncio
from typing import Any

from engine import START, InMemoryEventStore, JoinNode, RequestInput, Runner, Workflow, node


async def test_an_answer_during_a_turn_is_folded_in_and_nothing_runs_twice() -> None:
    calls: dict[str, int] = {}
    release = asyncio.Event()

    def count(name: str) -> None:
        calls[name] = calls.get(name, 0) + 1

    @node(rerun_on_resume=False)
    async def ask_a(node_input: Any):
        count("ask_a")
        yield RequestInput(interrupt_id="a")

    @node(rerun_on_resume=False)
    async def ask_b(node_input: Any):
        count("ask_b")
        yield RequestInput(interrupt_id="b")

    async def slow_a(node_input: Any) -> str:
        count("slow_a")
        await release.wait()
        return f"a={node_input}"

    def finish(node_input: dict[str, Any]) -> str:
        count("finish")
        return f"{node_input['slow_a']} b={node_input['ask_b']}"

    join = JoinNode(name="join")
    workflow = Workflow(
        name="two_asks", edges=[(START, (ask_a, ask_b)), (ask_a, slow_a, join), (ask_b, join), (join, finish)]
    )
    store = InMemoryEventStore()
    first = await Runner(workflow, store=store).run(None)
    assert sorted(i.id for i in first.interrupts) == ["a", "b"]

    worker = Runner(workflow, store=store)
    await worker.answer(first.session_id, {"a": 1})
    advancing = asyncio.create_task(worker.advance(first.session_id))
    while calls.get("slow_a") != 1:
        await asyncio.sleep(0)
    await Runner(workflow, store=store).answer(first.session_id, {"b": 2}, actor="bob")  # while slow_a runs
    release.set()

    result = await advancing
    assert (result.status, result.output) == ("completed", "a=1 b=2")
    assert calls == {"ask_a": 1, "ask_b": 1, "slow_a": 1, "finish": 1}
    kinds = [e.kind for e in await store.list_events(first.session_id)]
    assert kinds.count("answer") == 2 and kinds[-1] == "status"


class AnswerBeforeAppend(InMemoryEventStore):
    """Lets another caller answer just before the ``nth`` append of a turn (a person racing it)."""

    def __init__(self) -> None:
        super().__init__()
        self.countdown = 0
        self.hook: Any = None

    async def append(self, session_id: str, events: Any, *, expected_seq: int) -> int:
        if self.hook is not None:
            self.countdown -= 1
            if self.countdown == 0:
                hook, self.hook = self.hook, None
                await hook()
        return await super().append(session_id, events, expected_seq=expected_seq)


async def test_an_answer_just_before_the_turns_status_is_taken_up_too() -> None:
    @node(rerun_on_resume=False)
    async def ask(node_input: Any):
        yield RequestInput(interrupt_id=f"q{node_input}")

    @node(rerun_on_resume=True)
    async def both(ctx: Any, node_input: Any) -> list[Any]:
        return list(await asyncio.gather(ctx.run_node(ask, 1), ctx.run_node(ask, 2)))

    workflow = Workflow(name="race", edges=[(START, both)])
    store = AnswerBeforeAppend()
    first = await Runner(workflow, store=store).run(None)
    runner = Runner(workflow, store=store)
    await runner.answer(first.session_id, {"q1": "one"})

    async def second_answer() -> None:
        await Runner(workflow, store=store).answer(first.session_id, {"q2": "two"})

    # The resumed turn appends twice: the fast-forwarded child's completion, then its status.
    store.countdown, store.hook = 2, second_answer
    result = await runner.advance(first.session_id)
    assert (result.status, result.output) == ("completed", ["one", "two"])
    assert store.hook is None  # the answer really arrived in the middle of the turn
