"""Server-Sent Events: a run's events (``id:`` = seq) and the inbox's changes (``id:`` = the
position after the change, see ``inbox_positions``), both resumable with ``Last-Event-ID``.

Both are fed by the doorbells the websockets hear and read what the client has not seen
from the database, so a lost doorbell or a reconnect loses nothing. A stream opened with an
API token ends when the token is revoked. One user holds at most ``WFAPP_MAX_STREAMS_PER_USER``
streams open at once (``stream_slots``; 429 beyond).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router, Schema
from pydantic import Field

from wfapp.api import inbox_changes, inbox_positions, live, reads, schemas, stream_slots, tokens
from wfapp.api.auth import caller
from wfapp.api.problems import Problem, iso
from wfapp.api.responses import problems
from wfapp.human.permissions import may_answer_some
from wfapp.models import InterruptStatus, RunStatus
from wfapp.store.doorbell import INBOX_GROUP, NOTE_TYPE, session_group
from wfapp.web import queries
from wfapp.web.live import access
from wfapp.web.queries import LIVE_BATCH

runs_router = Router(tags=["streams"])
inbox_router = Router(tags=["streams"])
FINAL = (RunStatus.COMPLETED, RunStatus.CANCELLED)
SSE = {"text/event-stream": {"schema": {"type": "string"}}}


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return iso(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def frame(data: Any, *, event: str | None = None, seq: object = None) -> str:
    lines = [f"id: {seq}"] if seq is not None else []
    if event:
        lines.append(f"event: {event}")
    lines.append("data: " + json.dumps(data, default=_iso))
    return "\n".join(lines) + "\n\n"


def _streaming(user: Any, body: AsyncGenerator[str]) -> StreamingHttpResponse:
    """``body`` as an event stream, holding one of ``user``'s stream slots while it runs."""
    slot = stream_slots.take(user)

    async def held() -> AsyncIterator[str]:
        try:
            async for part in body:
                yield part
        finally:
            stream_slots.give_back(user, slot)
            await body.aclose()  # the stream's own cleanup (its doorbells) now, not when collected

    response = StreamingHttpResponse(held(), content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


def _guard(request: HttpRequest, user: Any, allowed: access.Allowed) -> access.Guard:
    token_id = getattr(user, "api_token_id", None)
    if token_id is not None:
        return access.Guard(user, partial(tokens.current_user, token_id), allowed)
    return access.Guard(user, access.for_session(user, request.session.session_key), allowed)


def _sse_resumed_after(last: str, pattern: str | None = "^[0-9]+$") -> dict[str, Any]:
    """The OpenAPI of a stream that resumes after its ``Last-Event-ID`` header (``last``)."""
    header = {
        "name": "Last-Event-ID",
        "in": "header",
        "required": False,
        "description": f"{last}: the stream resumes after it.",
        "schema": {"type": "string", **({"pattern": pattern} if pattern else {})},
    }
    return {
        "responses": {"200": {"description": "Server-Sent Events", "content": SSE}},
        "parameters": [header],
    }


def _ended_frame(guard: access.Guard) -> str:
    if getattr(guard.user, "api_token_id", None) is not None:
        why = Problem(
            "invalid-token", "The API token was revoked or expired, or lost this right; the stream ends here."
        )
    else:
        why = Problem("unauthenticated", "The session ended (or lost this right); the stream ends here.")
    return frame(why.document(), event="error")


class StreamQuery(Schema):
    after: int = Field(0, ge=0, description="Resume after this seq (the `Last-Event-ID` header wins).")


def _resume_from(request: HttpRequest, after: int) -> int:
    header = request.headers.get("Last-Event-ID", "").strip()
    if not header:
        return after
    if not header.isdigit():
        raise Problem("bad-request", "Last-Event-ID must be the seq of the last event received.")
    return int(header)


@runs_router.get(
    "/{run_id}/stream",
    response={200: None, **problems(400, 401, 404, 422, 429)},
    summary="Stream a run's events (SSE)",
    openapi_extra=_sse_resumed_after("The seq of the last event received"),
)
async def run_stream(request: HttpRequest, run_id: str, query: Query[StreamQuery]) -> StreamingHttpResponse:
    """Every event of the run after `after` (or `Last-Event-ID`), then each as it is appended.

    Each event is `id: <seq>` and `data: <event JSON>`; when the run has completed or was
    cancelled the stream sends `event: end` and closes. `: keep-alive` comments keep it open.
    While an agent's model answers, its text streams as `event: text` frames (`node_path`: the
    model step, `offset`: where `text` starts in the answer), without an `id:`: they are not
    stored, and the step's recorded event (with the whole answer) follows them; a client that
    reconnects gets that event, not the text it missed.
    """
    user = caller(request)
    after = _resume_from(request, query.after)
    await sync_to_async(reads.run_document)(user, run_id)  # 404 before the stream starts
    guard = _guard(request, user, lambda someone: queries.get_run(someone, run_id) is not None)
    await guard.opened()
    return _streaming(user, _run_events(guard, run_id, after))


async def _run_events(guard: access.Guard, session_id: str, after: int) -> AsyncGenerator[str]:
    async with live.doorbells(session_group(session_id)) as bell:
        yield "retry: 2000\n\n"
        while True:
            if not await guard.check():
                yield _ended_frame(guard)
                return
            rows, status, last_seq = await sync_to_async(reads.stream_batch)(guard.user, session_id, after)
            for row in rows:
                after = row["seq"]
                yield frame(row, seq=after)
            if len(rows) >= LIVE_BATCH:
                continue
            if status in FINAL and after >= last_seq:
                yield frame({"run": session_id, "status": status, "last_seq": after}, event="end")
                return
            rang = await bell.wait(access.recheck_seconds())
            while rang is not None and rang.get("type") == NOTE_TYPE:  # text as a model streams it
                text = _text_frame(rang, session_id)
                if text and not await guard.check():
                    break
                if text:
                    yield text
                rang = await bell.wait(access.recheck_seconds())
            if rang is None:
                yield ": keep-alive\n\n"


def _text_frame(note: dict[str, Any], session_id: str) -> str:
    """``event: text`` for a model's streamed text (never stored, so without an ``id:``); '' for
    any other note."""
    body, path = note.get("note"), note.get("node_path")
    if note.get("session_id") != session_id or not isinstance(path, str) or not isinstance(body, dict):
        return ""
    offset, text = body.get("offset"), body.get("text")
    if body.get("kind") != "model_text" or not isinstance(text, str):
        return ""
    if isinstance(offset, bool) or not isinstance(offset, int):
        return ""
    return frame({"node_path": path, "offset": offset, "text": text}, event="text")


class InboxQuery(Schema):
    workflow: str = Field("", max_length=200)
    q: str = Field("", max_length=200, description="Text in the question's message.")
    after: str | None = Field(
        None,
        max_length=inbox_positions.MAX_TOKEN,
        pattern=inbox_positions.TOKEN,
        description="Resume after this position: the `id:` of the last change received "
        "(`0`: from the beginning; the `Last-Event-ID` header wins).",
    )


@inbox_router.get(
    "/stream",
    response={200: None, **problems(400, 401, 422, 429)},
    summary="Stream the inbox's changes (SSE)",
    openapi_extra=_sse_resumed_after("The position of the last change received", pattern=None),
)
async def inbox_stream(request: HttpRequest, filters: Query[InboxQuery]) -> StreamingHttpResponse:
    """The pending questions you may answer (`event: pending` each, then `event: ready`), then changes.

    A new question is `event: pending`; one that is answered, superseded, withdrawn or cancelled
    is `event: closed` with its final state. Each change's `id:` is the stream's position after
    it: an opaque token (`ready` carries the position the list covers; a change with no `id:`
    is followed by another made by the same log entry). With `Last-Event-ID` (or `?after=`) the
    stream sends every change after that position, oldest first, each once, then `event:
    ready`, instead of the list: also changes whose transaction committed late, after others
    that began later.
    """
    header = request.headers.get("Last-Event-ID", "").strip()
    text = header or filters.after
    resume = await sync_to_async(inbox_positions.parse)(text) if text else None
    guard = _guard(request, caller(request), may_answer_some)
    await guard.opened()
    return _streaming(guard.user, _inbox_events(guard, filters.workflow, filters.q, resume))


START = inbox_positions.Upto(0)


@dataclass
class _Inbox:
    """One inbox stream's state: the position it has sent the changes up to."""

    user: Any
    workflow: str
    q: str
    position: inbox_positions.Position = START

    def open(self, resume: inbox_positions.Position | None) -> list[str]:
        """The frames that open the stream: the list, or the changes after ``resume``; then ``ready``."""
        with inbox_changes.snapshot():
            now = inbox_positions.current()
            if resume is None:
                frames = [frame(schemas.question(row), event="pending") for row in self._pending()]
                self.position = now
            else:
                self.position = resume
                frames = self._changes(now)
            count = self._pending().count()
        return [*frames, frame({"pending": count}, event="ready", seq=str(self.position))]

    def look(self) -> list[str]:
        """The changes since the last look (every entry committed since, whatever its id)."""
        with inbox_changes.snapshot():
            return self._changes(inbox_positions.current())

    def _pending(self) -> Any:
        rows = inbox_changes.matching(self.user, self.workflow, self.q).filter(status=InterruptStatus.PENDING)
        return rows.order_by("created_at", "id")

    def _changes(self, now: inbox_positions.Plain) -> list[str]:
        frames: list[str] = []
        more = True
        while more:  # page by page (``inbox_positions.PAGE`` entries), never the whole log at once
            batches = inbox_positions.since(self.position, now)
            for batch in batches:
                frames.extend(self._frames(batch))
                self.position = batch.end
            more = batches[-1].full
        self.position = now
        return frames

    def _frames(self, batch: inbox_positions.Batch) -> list[str]:
        frames = []
        changes = inbox_changes.after(self.user, self.workflow, self.q, batch.entries)
        for number, change in enumerate(changes):
            last = number == len(changes) - 1
            shared = not last and changes[number + 1].entry == change.entry
            # Changes made by one entry share its position: only the last of them says it.
            position = None if shared else (batch.end if last else batch.at(change.entry))
            frames.append(frame(schemas.question(change.question), event=change.kind, seq=position))
        return frames


async def _inbox_events(
    guard: access.Guard, workflow: str, q: str, resume: inbox_positions.Position | None
) -> AsyncGenerator[str]:
    inbox = _Inbox(guard.user, workflow, q)
    async with live.doorbells(INBOX_GROUP) as bell:
        yield "retry: 2000\n\n"
        for opening in await sync_to_async(inbox.open)(resume):
            yield opening
        while True:
            rang = await bell.wait(access.recheck_seconds())
            if not await guard.check():
                yield _ended_frame(guard)
                return
            inbox.user = guard.user
            for change in await sync_to_async(inbox.look)():
                yield change
            if rang is None:
                yield ": keep-alive\n\n"
