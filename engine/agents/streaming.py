"""A model's text as it arrives, for whoever watches the run; never written to the log.

When the run's store passes notes on (``Context.watched``: the dashboard's store does), a
model step asks the model for a streamed response and publishes each piece of text as a
``{"kind": "model_text", "offset": n, "text": "..."}`` note from the step's path (``offset``
counts the characters sent before, so a listener that joined late knows it missed some). The
step still records the whole ``ModelResponse`` once, when the stream ends; the notes are
ephemeral and a replay, which never calls the model, sends none.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any

from pydantic_ai import ModelMessage, ModelResponse, PartDeltaEvent, PartStartEvent, TextPart, TextPartDelta
from pydantic_ai.models import Model, ModelRequestParameters
from pydantic_ai.models.function import FunctionModel
from pydantic_ai.settings import ModelSettings

from ..context import Context

MODEL_TEXT = "model_text"


def wants_stream(model: Model, step: Context) -> bool:
    """Stream when someone listens, or when the model can only stream (a stream-only ``FunctionModel``)."""
    if isinstance(model, FunctionModel):
        return model.stream_function is not None and (step.watched or model.function is None)
    return step.watched


def text_of(event: Any) -> str:
    """The text a stream event adds ('' for tool calls, thinking and the like)."""
    if isinstance(event, PartStartEvent) and isinstance(event.part, TextPart):
        return event.part.content
    if isinstance(event, PartDeltaEvent) and isinstance(event.delta, TextPartDelta):
        return event.delta.content_delta
    return ""


async def streamed(
    model: Model,
    step: Context,
    messages: list[ModelMessage],
    settings: ModelSettings | None,
    parameters: ModelRequestParameters,
) -> ModelResponse:
    """Ask ``model`` for a streamed response, publishing its text; return the whole response."""
    sent = 0
    async with AsyncExitStack() as stack:
        try:
            stream = await stack.enter_async_context(model.request_stream(messages, settings, parameters))
        except NotImplementedError:  # a model that cannot stream answers in one piece
            return await model.request(messages, settings, parameters)
        async for event in stream:
            text = text_of(event)
            if text:
                await step.publish({"kind": MODEL_TEXT, "offset": sent, "text": text})
                sent += len(text)
        return stream.get()
