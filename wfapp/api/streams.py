"""Server-Sent Events: a run's events (``id:`` = seq, resumable) and the inbox's changes.

Both are fed by the doorbells the websockets hear and read what the client has not seen
from the database, so a lost doorbell or a reconnect loses nothing. A stream opened with an
API token ends when the token is revoked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router, Schema
from pydantic import Field

from wfapp.doorbell import INBOX_GROUP, session_group
from wfapp.models import RunStatus
from wfapp.web.queries import LIVE_BATCH

from . import live, reads, tokens
from .auth import caller
from .problems import Problem, iso
from .responses import problems

runs_router = Router(tags=["streams"])
inbox_router = Router(tags=["streams"])
FINAL = (RunStatus.COMPLETED, RunStatus.CANCELLED)
SSE = {"text/event-stream": {"schema": {"type": "string"}}}


def _iso(value: Any) -> str:
    if isinstance(value, datetime):
        return iso(value)
    raise TypeError(f"{type(value).__name__} is not JSON")


def frame(data: Any, *, event: str | None = None, seq: int | None = None) -> str:
    lines = [f"id: {seq}"] if seq is not None else []
    if event:
        lines.append(f"event: {event}")
    lines.append("data: " + json.dumps(data, default=_iso))
    return "\n".join(lines) + "\n\n"


def _streaming(body: AsyncIterator[str]) -> StreamingHttpResponse:
    response = StreamingHttpResponse(body, content_type="text/event-stream")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


async def _revoked(user: Any) -> bool:
    token_id = getattr(user, "api_token_id", None)
    return token_id is not None and not await sync_to_async(tokens.still_active)(token_id)


def _revoked_frame() -> str:
    problem = Problem("invalid-token", "The API token was revoked; the stream ends here.")
    return frame(problem.document(), event="error")


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
    response={200: None, **problems(400, 401, 404, 422)},
    summary="Stream a run's events (SSE)",
    openapi_extra={
        "responses": {"200": {"description": "Server-Sent Events", "content": SSE}},
        "parameters": [
            {
                "name": "Last-Event-ID",
                "in": "header",
                "required": False,
                "description": "The seq of the last event received: the stream resumes after it.",
                "schema": {"type": "string", "pattern": "^[0-9]+$"},
            }
        ],
    },
)
async def run_stream(request: HttpRequest, run_id: str, query: Query[StreamQuery]) -> StreamingHttpResponse:
    """Every event of the run after `after` (or `Last-Event-ID`), then each as it is appended.

    Each event is `id: <seq>` and `data: <event JSON>`; when the run has completed or was
    cancelled the stream sends `event: end` and closes. `: keep-alive` comments keep it open.
    """
    user = caller(request)
    after = _resume_from(request, query.after)
    await sync_to_async(reads.run_document)(user, run_id)  # 404 before the stream starts
    return _streaming(_run_events(user, run_id, after))


async def _run_events(user: Any, session_id: str, after: int) -> AsyncIterator[str]:
    async with live.doorbells(session_group(session_id)) as bell:
        yield "retry: 2000\n\n"
        while True:
            rows, status, last_seq = await sync_to_async(reads.stream_batch)(user, session_id, after)
            for row in rows:
                after = row["seq"]
                yield frame(row, seq=after)
            if len(rows) >= LIVE_BATCH:
                continue
            if status in FINAL and after >= last_seq:
                yield frame({"run": session_id, "status": status, "last_seq": after}, event="end")
                return
            rang = await bell.wait()
            if await _revoked(user):
                yield _revoked_frame()
                return
            if rang is None:
                yield ": keep-alive\n\n"


class InboxQuery(Schema):
    workflow: str = Field("", max_length=200)
    q: str = Field("", max_length=200, description="Text in the question's message.")


@inbox_router.get(
    "/stream",
    response={200: None, **problems(401, 422)},
    summary="Stream the inbox's changes (SSE)",
    openapi_extra={"responses": {"200": {"description": "Server-Sent Events", "content": SSE}}},
)
async def inbox_stream(request: HttpRequest, filters: Query[InboxQuery]) -> StreamingHttpResponse:
    """The pending questions you may answer (`event: pending` each, then `event: ready`), then changes.

    A new question is `event: pending`; one that is answered, withdrawn or cancelled is
    `event: closed` with its final state. A reconnect starts again with the current list.
    """
    return _streaming(_inbox_events(caller(request), filters.workflow, filters.q))


async def _inbox_events(user: Any, workflow: str, q: str) -> AsyncIterator[str]:
    shown: dict[int, str] = {}  # question id -> its run
    async with live.doorbells(INBOX_GROUP) as bell:
        yield "retry: 2000\n\n"
        for item in await sync_to_async(reads.pending_questions)(user, workflow, q):
            shown[item["id"]] = item["run"]
            yield frame(item, event="pending")
        yield frame({"pending": len(shown)}, event="ready")
        while True:
            rang = await bell.wait()
            if await _revoked(user):
                yield _revoked_frame()
                return
            # A doorbell names its run: look at that run only; when idle, look at everything.
            run = str(rang.get("session_id", "")) if rang else None
            now = await sync_to_async(reads.pending_questions)(user, workflow, q, run)
            for item in now:
                if item["id"] not in shown:
                    shown[item["id"]] = item["run"]
                    yield frame(item, event="pending")
            ids = {item["id"] for item in now}
            gone = sorted(pk for pk, of in shown.items() if (run is None or of == run) and pk not in ids)
            for item in await sync_to_async(reads.questions_by_id)(user, gone) if gone else []:
                yield frame(item, event="closed")
            for pk in gone:
                del shown[pk]
            if rang is None:
                yield ": keep-alive\n\n"
