"""Streaming: a watched run publishes the model's text as it arrives; the log holds the response once."""

from __future__ import annotations

from typing import Any

from pydantic_ai import ModelResponse, TextPart
from pydantic_ai.models.function import FunctionModel

from engine import START, InMemoryEventStore, LlmAgent, Runner, Workflow

from .scripts import Script, StreamScript, text


class WatchedStore(InMemoryEventStore):
    """An in-memory store that passes notes on, as the dashboard's store does, and keeps them."""

    def __init__(self) -> None:
        super().__init__()
        self.notes: list[tuple[str, dict[str, Any]]] = []

    async def publish(self, session_id: str, node_path: str, note: dict[str, Any]) -> None:
        self.notes.append((node_path, note))


def writer(model: Any, **options: Any) -> Workflow:
    return Workflow(name="wf", edges=[(START, LlmAgent(name="writer", model=model, **options))])


async def test_a_watched_run_streams_the_text_and_records_the_response_once(read_log: Any) -> None:
    store = WatchedStore()
    script = StreamScript(["Hel", "lo ", "world"])
    runner = Runner(writer(script.model), store=store)
    result = await runner.run("greet")

    assert result.status == "completed", result.error
    assert result.output == "Hello world"
    step = "wf@1/writer@1/model@1"
    assert store.notes == [
        (step, {"kind": "model_text", "offset": 0, "text": "Hel"}),
        (step, {"kind": "model_text", "offset": 3, "text": "lo "}),
        (step, {"kind": "model_text", "offset": 6, "text": "world"}),
    ]
    log = await read_log(runner, result.session_id)
    assert log.outputs()[step]["response"]["parts"][0]["content"] == "Hello world"
    assert log.outputs()[step]["response"]["usage"]["output_tokens"] > 0
    # The pieces are not in the log: the same events as a run whose model answered in one piece.
    whole = Runner(writer(Script(text("Hello world")).model), store=WatchedStore())
    plain = await whole.run("greet")
    assert log.kinds() == (await read_log(whole, plain.session_id)).kinds()


async def test_a_resumed_chat_replays_the_streamed_reply_without_streaming_it_again() -> None:
    store = WatchedStore()
    script = StreamScript(["Which ", "city?"], ["Booked in ", "Paris."])
    runner = Runner(writer(script.model, mode="chat"), store=store)
    first = await runner.run("dinner please")
    assert first.interrupts[0].message == "Which city?"
    store.notes.clear()

    second = await runner.resume(first.session_id, {first.interrupts[0].id: "Paris"})

    assert second.interrupts[0].message == "Booked in Paris."
    assert [path for path, _ in store.notes] == ["wf@1/writer@1/model@2"] * 2  # model@1 replayed, silent
    assert script.calls == 2


async def test_streamed_tool_calls_run_the_tool() -> None:
    def lookup(order_id: str) -> str:
        """Look an order up."""
        return f"{order_id}: shipped"

    store = WatchedStore()
    script = StreamScript({"lookup": {"order_id": "A1"}}, ["It has ", "shipped."])
    result = await Runner(writer(script.model, tools=[lookup]), store=store).run("where is A1?")

    assert result.output == "It has shipped."
    assert [path for path, _ in store.notes] == ["wf@1/writer@1/model@2"] * 2  # a tool call has no text


async def test_only_a_watched_run_asks_for_a_stream() -> None:
    asked: list[str] = []

    def whole(messages: Any, info: Any) -> ModelResponse:
        asked.append("whole")
        return ModelResponse(parts=[TextPart("hi")])

    async def pieces(messages: Any, info: Any) -> Any:
        asked.append("stream")
        yield "h"
        yield "i"

    model = FunctionModel(whole, stream_function=pieces)
    assert (await Runner(writer(model), store=InMemoryEventStore()).run("x")).output == "hi"
    store = WatchedStore()
    assert (await Runner(writer(model), store=store).run("x")).output == "hi"
    assert asked == ["whole", "stream"]
    assert [note["text"] for _, note in store.notes] == ["h", "i"]
