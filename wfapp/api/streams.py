"""Server-Sent Events: a run's events (``id:`` = seq) and the inbox's changes (``id:`` = the
position of the change, see ``inbox_changes``), both resumable with ``Last-Event-ID``.

Both are fed by the doorbells the websockets hear and read what the client has not seen
from the database, so a lost doorbell or a reconnect loses nothing. A stream opened with an
API token ends when the token is revoked.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, StreamingHttpResponse
from ninja import Query, Router, Schema
from pydantic import Field

from wfapp.doorbell import INBOX_GROUP, session_group
from wfapp.models import Interrupt, InterruptStatus, RunStatus
from wfapp.web.queries import LIVE_BATCH

from . import inbox_changes, live, reads, schemas, tokens
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


def _sse_resumed_after(last: str) -> dict[str, Any]:
    """The OpenAPI of a stream that resumes after its ``Last-Event-ID`` header (``last``)."""
    header = {
        "name": "Last-Event-ID",
        "in": "header",
        "required": False,
        "description": f"{last}: the stream resumes after it.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    }
    return {
        "responses": {"200": {"description": "Server-Sent Events", "content": SSE}},
        "parameters": [header],
    }


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
    openapi_extra=_sse_resumed_after("The seq of the last event received"),
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
    after: int | None = Field(
        None, ge=0, description="Resume after this position (the `Last-Event-ID` header wins)."
    )


@inbox_router.get(
    "/stream",
    response={200: None, **problems(400, 401, 422)},
    summary="Stream the inbox's changes (SSE)",
    openapi_extra=_sse_resumed_after("The position of the last change received"),
)
async def inbox_stream(request: HttpRequest, filters: Query[InboxQuery]) -> StreamingHttpResponse:
    """The pending questions you may answer (`event: pending` each, then `event: ready`), then changes.

    A new question is `event: pending`; one that is answered, superseded, withdrawn or cancelled
    is `event: closed` with its final state. Each change's `id:` is its position: the id of the
    log entry that made it, growing across all runs (`ready` carries the position the list
    covers). With `Last-Event-ID` (or `?after=`) the stream sends the changes after that
    position, oldest first, then `event: ready`, instead of the list.
    """
    header = request.headers.get("Last-Event-ID", "").strip()
    resume = _resume_from(request, filters.after or 0) if header or filters.after is not None else None
    return _streaming(_inbox_events(caller(request), filters.workflow, filters.q, resume))


@dataclass
class _Inbox:
    """One inbox stream's state: its position and the pending questions it has shown (id: run)."""

    user: Any
    workflow: str
    q: str
    position: int = 0
    shown: dict[int, str] = field(default_factory=dict)

    def _pending(self, session_id: str | None = None) -> list[Interrupt]:
        rows = inbox_changes.matching(self.user, self.workflow, self.q).filter(status=InterruptStatus.PENDING)
        if session_id is not None:
            rows = rows.filter(session_id=session_id)
        return list(rows.order_by("created_at", "id"))

    def open(self, resume: int | None) -> list[str]:
        """The frames that open the stream: the list, or the changes after ``resume``; then ``ready``."""
        with inbox_changes.snapshot():
            top = inbox_changes.horizon()
            if resume is None:
                self.position = top
                pending = self._pending()
                frames = [frame(schemas.question(row), event="pending") for row in pending]
            else:
                self.position = max(resume, top)
                changes = inbox_changes.after(self.user, self.workflow, self.q, resume, top)
                frames = [self._frame(c.question, c.kind, c.position) for c in changes]
                pending = self._pending()
        self.shown = {row.pk: row.session_id for row in pending}
        return [*frames, frame({"pending": len(self.shown)}, event="ready", seq=self.position)]

    def look(self, session_id: str | None) -> list[str]:
        """The changes since the last look; then stragglers (see ``inbox_changes``) of the run a
        doorbell named, or of every run when none did."""
        with inbox_changes.snapshot():
            top = inbox_changes.horizon()
            changes = inbox_changes.after(self.user, self.workflow, self.q, self.position, top)
            frames = [self._frame(c.question, c.kind, c.position) for c in changes]
            self.position = max(self.position, top)
            for change in changes:
                if change.kind == "pending" and change.question.status == InterruptStatus.PENDING:
                    self.shown[change.question.pk] = change.question.session_id
                elif change.kind == "closed":
                    self.shown.pop(change.question.pk, None)
            now = {row.pk: row for row in self._pending(session_id)}
            late = [row for pk, row in now.items() if pk not in self.shown]
            gone = [pk for pk, run in self.shown.items() if (session_id in (None, run)) and pk not in now]
            closed = list(inbox_changes.matching(self.user, "", "").filter(pk__in=gone).order_by("pk"))
        for row in late:
            self.shown[row.pk] = row.session_id
            frames.append(self._frame(row, "pending", self.position))
        for row in closed:
            del self.shown[row.pk]
            frames.append(self._frame(row, "closed", self.position))
        return frames

    def _frame(self, row: Interrupt, kind: str, position: int) -> str:
        return frame(schemas.question(row), event=kind, seq=position)


async def _inbox_events(user: Any, workflow: str, q: str, resume: int | None) -> AsyncIterator[str]:
    inbox = _Inbox(user, workflow, q)
    async with live.doorbells(INBOX_GROUP) as bell:
        yield "retry: 2000\n\n"
        for opening in await sync_to_async(inbox.open)(resume):
            yield opening
        while True:
            rang = await bell.wait()
            if await _revoked(user):
                yield _revoked_frame()
                return
            # A doorbell names its run: look for stragglers there only; when idle, everywhere.
            run = str(rang.get("session_id", "")) if rang else None
            for change in await sync_to_async(inbox.look)(run):
                yield change
            if rang is None:
                yield ": keep-alive\n\n"
