"""``runs``: the filtered list, one run (with an ETag), its events after a seq, cancel, retry."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema
from ninja.responses import Status
from pydantic import Field

from engine.errors import ValueLimitError
from wfapp.api import reads
from wfapp.api.auth import caller
from wfapp.api.handlers import refused_value
from wfapp.api.responses import document, problems, with_etag
from wfapp.api.schemas import CancelBody, EventPage, RetryBody, Run, RunPage
from wfapp.runs import interventions

router = Router(tags=["runs"])
DURATION = r"^([0-9]{1,7}[smhd]?)?$"


class RunFilters(Schema):
    status: Literal["", "running", "waiting", "completed", "failed", "cancelled"] = ""
    workflow: str = Field("", max_length=200)
    q: str = Field("", max_length=100, description="Part of the run id.")
    text: str = Field("", max_length=200, description="Words in the run's input or output JSON.")
    by: str = Field("", max_length=150, description="The username of who started the run.")
    started_from: datetime | date | None = Field(
        None, description="Started at or after (a date: its start, UTC)."
    )
    started_to: datetime | date | None = Field(None, description="Started before (a date: its end, UTC).")
    min_duration: str = Field(
        "",
        pattern=DURATION,
        description="From start to last change, at least: `90` (seconds), `90s`, `5m`, `2h`, `1d`.",
    )
    max_duration: str = Field("", pattern=DURATION, description="From start to last change, at most.")
    after: str | None = Field(None, max_length=500, description="The `next_cursor` of the previous page.")


class EventQuery(Schema):
    after: int = Field(0, ge=0, description="Only events with a greater seq.")
    limit: int = Field(reads.EVENTS_PAGE, ge=1, le=reads.EVENTS_PAGE)


@router.get("", response={200: RunPage, **problems(400, 401, 422)}, summary="List runs, newest first")
async def list_runs(request: HttpRequest, filters: Query[RunFilters]) -> Any:
    """The same filters as the dashboard's runs list (the text search reads every run)."""
    chosen = {
        k: v.isoformat() if isinstance(v, date) else v for k, v in filters.dict(exclude={"after"}).items()
    }
    return await sync_to_async(reads.runs_page)(caller(request), chosen, filters.after)


@router.get(
    "/{run_id}", response={200: Run, 304: None, **problems(401, 404)}, summary="One run", url_name="run"
)
async def get_run(request: HttpRequest, run_id: str) -> HttpResponse:
    """Status, input, output, error and the open questions you may answer; `ETag`/`If-None-Match`."""
    data = await sync_to_async(reads.run_document)(caller(request), run_id)
    return with_etag(request, document(Run, data))


@router.get(
    "/{run_id}/events",
    response={200: EventPage, 304: None, **problems(401, 404, 422)},
    summary="A run's events",
)
async def list_events(request: HttpRequest, run_id: str, query: Query[EventQuery]) -> HttpResponse:
    """The run's events after seq `after`, oldest first, at most `limit`; `ETag`/`If-None-Match`."""
    data = await sync_to_async(reads.events_page)(caller(request), run_id, query.after, query.limit)
    return with_etag(request, document(EventPage, data))


@router.post(
    "/{run_id}/cancel",
    response={200: Run, **problems(401, 403, 404, 409, 413, 415, 422)},
    summary="Cancel a run",
)
async def cancel(request: HttpRequest, run_id: str, body: CancelBody | None = None) -> Any:
    """Cancel the run for good; an optional `reason` is kept in its log and shown as `cancelled`."""
    user = caller(request)
    await sync_to_async(reads.run_document)(user, run_id)  # 404 first
    reason = body.reason if body is not None else ""
    try:
        await interventions.cancel_run(run_id, user=user, reason=reason)
    except ValueLimitError as refused:
        raise refused_value(refused, "reason") from None
    return await sync_to_async(reads.run_document)(user, run_id)


@router.post(
    "/{run_id}/retry",
    response={202: Run, **problems(401, 403, 404, 409, 413, 415, 422)},
    summary="Retry a run",
)
async def retry(request: HttpRequest, run_id: str, body: RetryBody | None = None) -> Any:
    """Run the failed nodes of a failed run again, in the background (202): all of them, or
    only `node`, with `input` as its edited input when given. A `node` that did not fail is a
    422 naming it and the run's failed nodes; an `input` its schema refuses is a 422 with the
    fields; nothing is written then."""
    user = caller(request)
    await sync_to_async(reads.run_document)(user, run_id)
    body = body or RetryBody.model_validate({})
    edited = "input" in body.model_fields_set
    try:
        await interventions.retry_run(
            run_id, user=user, node=body.node, node_input=body.input, edited=edited, reason=body.reason
        )
    except ValueLimitError as refused:
        raise refused_value(refused, "reason" if refused.what == "The reason" else "input") from None
    return Status(202, await sync_to_async(reads.run_document)(user, run_id))
