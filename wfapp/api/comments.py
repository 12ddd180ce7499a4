"""Comments on a run and on its questions (``wfapp.human.comments``): list them, add one.

A comment is a ``comment`` event of the run, so it is also in ``runs/{id}/events`` and the
run's stream. Who may read them: whoever may view the run (``interrupts/{id}/comments``: whoever
may see the question); who may add one: whoever may answer the workflow's questions, as on the
run page.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest
from ninja import Query, Router, Schema
from ninja.responses import Status
from pydantic import Field

from engine.errors import ValueLimitError
from wfapp.api import reads
from wfapp.api.auth import caller
from wfapp.api.handlers import refused_value
from wfapp.api.problems import Problem
from wfapp.api.responses import document, problems
from wfapp.api.schemas import Comment, CommentBody, CommentList, QuestionCommentBody, comment
from wfapp.human import comments
from wfapp.web import queries

runs_router = Router(tags=["comments"])
interrupts_router = Router(tags=["comments"])
CREATE_PROBLEMS = problems(401, 403, 404, 409, 413, 415, 422)


COMMENTS_PAGE = 100


class CommentQuery(Schema):
    after: int = Field(0, ge=0, description="Only comments with a greater seq (a page's `next_after`).")
    limit: int = Field(COMMENTS_PAGE, ge=1, le=COMMENTS_PAGE, description="At most this many.")


def _page(session_id: str, query: CommentQuery, interrupt_id: str | None = None) -> dict[str, Any]:
    found = comments.comments(session_id, interrupt_id=interrupt_id, after=query.after, limit=query.limit + 1)
    more = len(found) > query.limit
    items = found[: query.limit]
    return {"items": [comment(c) for c in items], "next_after": items[-1]["seq"] if more else None}


def _run_comments(user: Any, session_id: str, query: CommentQuery) -> dict[str, Any]:
    session = queries.get_run(user, session_id)
    if session is None:
        raise Problem("not-found", f"No run {session_id!r}.")
    return _page(session.pk, query)


def _question_comments(user: Any, pk: int, query: CommentQuery) -> dict[str, Any]:
    _, session_id, interrupt_id = reads.question_document(user, pk)
    return _page(session_id, query, interrupt_id)


async def _add(user: Any, session_id: str, text: str, question: int | None) -> Status[dict[str, Any]]:
    try:
        seq = await comments.add_comment(session_id, text, user=user, interrupt_pk=question)
    except ValueLimitError as refused:
        raise refused_value(refused, "text") from None
    [added] = await sync_to_async(comments.comments)(session_id, seq=seq)
    return Status(201, document(Comment, comment(added)))


@runs_router.get(
    "/{run_id}/comments",
    response={200: CommentList, **problems(401, 404, 422)},
    summary="A run's comments",
)
async def list_run_comments(request: HttpRequest, run_id: str, query: Query[CommentQuery]) -> Any:
    """The comments on the run and on its questions, in the order they were made, a page at a
    time (`after` the previous page's `next_after`)."""
    return await sync_to_async(_run_comments)(caller(request), run_id, query)


@runs_router.post(
    "/{run_id}/comments", response={201: Comment, **CREATE_PROBLEMS}, summary="Comment on a run"
)
async def add_run_comment(request: HttpRequest, run_id: str, body: CommentBody) -> Any:
    """Add a comment (about the run's question `question`, if given). It changes nothing in
    the run: a waiting run goes on waiting. 403: you may not answer the workflow's questions."""
    user = caller(request)
    await sync_to_async(reads.run_document)(user, run_id)  # 404 first
    return await _add(user, run_id, body.text, body.question)


@interrupts_router.get(
    "/{int:question_id}/comments",
    response={200: CommentList, **problems(401, 404, 422)},
    summary="A question's comments",
)
async def list_question_comments(request: HttpRequest, question_id: int, query: Query[CommentQuery]) -> Any:
    """The comments about this question (asked again under the same id: about any asking), in
    order, a page at a time (`after` the previous page's `next_after`)."""
    return await sync_to_async(_question_comments)(caller(request), question_id, query)


@interrupts_router.post(
    "/{int:question_id}/comments",
    response={201: Comment, **CREATE_PROBLEMS},
    summary="Comment on a question",
)
async def add_question_comment(request: HttpRequest, question_id: int, body: QuestionCommentBody) -> Any:
    """Add a comment about the question to its run's log (answered or not)."""
    user = caller(request)
    _, session_id, _ = await sync_to_async(reads.question_document)(user, question_id)
    return await _add(user, session_id, body.text, question_id)
