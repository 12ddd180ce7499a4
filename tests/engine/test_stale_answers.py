"""An answer is reused only for the question it was given to (issue 24.2, engine.asking).

A replayed question whose node now gets another input (so asks another question) is asked
again instead of taking the recorded answer.
"""

from __future__ import annotations

from typing import Any

from engine import START, Context, InMemoryEventStore, RequestInput, Runner, Workflow, node

PRICE: dict[str, float] = {}
PAID: list[float] = []


@node
def confirm(node_input: dict[str, Any]) -> RequestInput:
    return RequestInput(interrupt_id="pay", message=f"Pay {node_input['amount']}?", response_schema=bool)


@node(rerun_on_resume=True)
async def pay(ctx: Context, node_input: Any) -> float:
    amount = PRICE["amount"]  # read from elsewhere: it may change between two turns
    if await ctx.run_node(confirm, {"amount": amount}):
        PAID.append(amount)
    return amount


def flow() -> Workflow:
    return Workflow(name="wf", edges=[(START, pay)])


async def test_an_answer_given_to_one_question_is_not_used_for_another() -> None:
    PRICE["amount"], PAID[:] = 39, []
    store = InMemoryEventStore()
    runner = Runner(flow(), store=store)
    waiting = await runner.run(None)
    [first] = waiting.interrupts
    assert first.message == "Pay 39?"

    PRICE["amount"] = 9999  # the node will ask about another amount than the person saw
    again = await runner.resume(waiting.session_id, {"pay": True})

    assert PAID == []  # the approval of 39 did not pay 9999
    assert again.status == "waiting", again.error
    [second] = again.interrupts
    assert second.message == "Pay 9999?"
    assert second.node_path == first.node_path

    done = await runner.resume(waiting.session_id, {"pay": False})
    assert done.status == "completed", done.error
    assert PAID == []
    events = await store.list_events(waiting.session_id)
    answers = [event for event in events if event.kind == "answer"]
    assert [a.answer.value for a in answers if a.answer] == [True, False]


async def test_the_same_question_keeps_its_answer() -> None:
    PRICE["amount"], PAID[:] = 39, []
    runner = Runner(flow(), store=InMemoryEventStore())
    waiting = await runner.run(None)
    done = await runner.resume(waiting.session_id, {"pay": True})
    assert done.status == "completed", done.error
    assert PAID == [39]
