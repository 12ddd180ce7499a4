"""Chat mode: every reply is a question whose answer is the user's next message."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow

from .scripts import Script, call, text


async def test_a_chat_is_a_run_that_waits_for_each_user_message(store: InMemoryEventStore) -> None:
    script = Script(text("Which city?"), text("Booked a table in Paris."))
    agent = LlmAgent(name="concierge", model=script.model, mode="chat", instruction="Book tables.")
    runner = Runner(Workflow(name="wf", edges=[(START, agent)]), store=store)

    first = await runner.run("I want dinner")
    [question] = first.interrupts
    assert question.message == "Which city?"
    assert question.payload == {"kind": "chat_reply", "agent": "concierge", "reply": "Which city?"}
    assert question.response_schema["type"] == "string"

    second = await runner.resume(first.session_id, {question.id: "Paris"})
    [again] = second.interrupts
    assert again.message == "Booked a table in Paris."
    assert [m.parts[-1].content for m in script.requests[1] if m.kind == "request"] == [
        "I want dinner",
        "Paris",
    ]

    done = await runner.resume(first.session_id, {again.id: ""})  # an empty message ends the chat
    assert done.status == "completed"
    assert done.output == "Booked a table in Paris."
    assert script.calls == 2  # every resume replayed the earlier replies


class Booking(BaseModel):
    city: str
    people: int


async def test_a_chat_with_an_output_schema_ends_when_the_model_gives_it(store: InMemoryEventStore) -> None:
    def book(messages: Any, info: Any) -> Any:
        return call("final_result", {"city": "Oslo", "people": 2})

    script = Script(text("For how many?"), book)
    agent = LlmAgent(name="concierge", model=script.model, mode="chat", output_schema=Booking)
    runner = Runner(Workflow(name="wf", edges=[(START, agent)]), store=store)

    first = await runner.run("a table in Oslo")
    done = await runner.resume(first.session_id, {first.interrupts[0].id: "two of us"})

    assert done.status == "completed", done.error
    assert done.output == Booking(city="Oslo", people=2)
