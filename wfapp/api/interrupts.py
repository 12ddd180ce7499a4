"""``interrupts``: the questions you may answer (the inbox's filters and visibility), answering one."""

from __future__ import annotations

from typing import Any, Literal

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from ninja import Query, Router, Schema
from pydantic import Field

from engine.errors import AskingChangedError, AskingClosedError
from wfapp.api import idempotency, live, reads
from wfapp.api.auth import caller
from wfapp.api.problems import Problem, invalid
from wfapp.api.responses import document, problems
from wfapp.api.schemas import AnswerBody, AnswerResult, Question, QuestionPage, ReassignBody
from wfapp.errors import InputValidationError, NotAssignedError, NotPermitted, UnknownRunError
from wfapp.human import audit, claims
from wfapp.runs import answering

router = Router(tags=["interrupts"])


class QuestionFilters(Schema):
    workflow: str = Field("", max_length=200)
    q: str = Field("", max_length=200, description="Text in the question's message.")
    sort: Literal["oldest", "newest"] = "oldest"
    after: str | None = Field(None, max_length=500, description="The `next_cursor` of the previous page.")


@router.get("", response={200: QuestionPage, **problems(400, 401, 422)}, summary="List pending questions")
async def list_questions(request: HttpRequest, filters: Query[QuestionFilters]) -> Any:
    """Pending questions you may answer, oldest first (or newest), as the inbox shows them."""
    return await sync_to_async(reads.questions_page)(
        caller(request), filters.workflow, filters.q, filters.sort == "newest", filters.after
    )


@router.get("/{int:question_id}", response={200: Question, **problems(401, 404)}, summary="One question")
async def get_question(request: HttpRequest, question_id: int) -> Any:
    data, _, _ = await sync_to_async(reads.question_document)(caller(request), question_id)
    return data


@router.post(
    "/{int:question_id}/answer",
    response={200: AnswerResult, 202: AnswerResult, **problems(400, 401, 403, 404, 409, 413, 415, 422)},
    summary="Answer a question",
    openapi_extra={"parameters": [idempotency.PARAMETER]},
)
async def answer(request: HttpRequest, question_id: int, body: AnswerBody) -> HttpResponse:
    """Answer (validated against the question's `response_schema`); the first answer wins.

    200: the run took the answer up in this server (embedded mode) and the response shows it
    waiting for its next question or finished. 202: the answer is recorded and the run advances
    in the background (a worker's job in the scaled mode, or a turn still going after a few
    seconds); follow `runs/{id}/stream`. 409 `already-answered` says who answered first and when.

    The answer is bound to this question (its asking, `request_seq`), never to a later asking of
    the same `interrupt_id`: 409 `asking-closed` when it was asked again, withdrawn, or shows
    something else than the `digest` sent (optional; send it to bind the answer to what you showed).
    409 `claimed`: another user holds the question; someone who may override claims confirms
    with `override_claim: true`.
    """
    user = caller(request)
    row = await sync_to_async(reads.asking)(user, question_id)
    session_id = row.session_id

    async def act() -> idempotency.Outcome:
        try:
            turn = await answering.answer_interrupt(
                session_id,
                row.interrupt_id,
                body.answer,
                user=user,
                reason=body.reason,
                asking=audit.asking_of(row, body.digest),
                override_claim=body.override_claim,
            )
        except (AskingClosedError, AskingChangedError):
            await row.arefresh_from_db()
            raise Problem("asking-closed", await sync_to_async(audit.stale_reason)(row)) from None
        except NotAssignedError:
            raise  # visible, but assigned to, claimed by or approved by others: 403 with why
        except (NotPermitted, UnknownRunError):
            raise Problem("not-found", f"No question {question_id}.") from None
        done = await live.turn_settled(turn)
        data, _, _ = await sync_to_async(reads.question_document)(user, question_id)
        run = await sync_to_async(reads.run_document)(user, session_id)
        result = document(AnswerResult, {"question": data, "run": run})
        return idempotency.Outcome(200 if done else 202, result)

    return await idempotency.once(request, user, act)


# -- claim, release, reassign (the inbox's actions; wfapp.human.claims decides who may) -----------------


async def _decide(
    request: HttpRequest, question_id: int, decision: str, users: list[str] | None = None
) -> Any:
    user = caller(request)
    row = await sync_to_async(reads.asking)(user, question_id)
    try:
        await claims.decide_interrupt(
            row.session_id, row.interrupt_id, decision, user=user, users=users, request_seq=row.request_seq
        )
    except UnknownRunError:
        raise Problem("not-found", f"No question {question_id}.") from None
    except InputValidationError as refused:
        errors = [{"field": "to", "message": m} for ms in refused.field_errors.values() for m in ms]
        raise invalid(errors) from None
    data, _, _ = await sync_to_async(reads.question_document)(user, question_id)
    return data


DECISION_PROBLEMS = problems(401, 403, 404, 409)


@router.post(
    "/{int:question_id}/claim", response={200: Question, **DECISION_PROBLEMS}, summary="Claim a question"
)
async def claim(request: HttpRequest, question_id: int) -> Any:
    """Hold the question so that only you answer it (others still see it). 409 `claimed`: someone
    else holds it (`claimed_by`); 403: you may not answer it (assigned to others)."""
    return await _decide(request, question_id, "claim")


@router.post(
    "/{int:question_id}/unclaim", response={200: Question, **DECISION_PROBLEMS}, summary="Release a question"
)
async def unclaim(request: HttpRequest, question_id: int) -> Any:
    """Let go of a question you hold; a holder of `wfapp.reassign_interrupt` may free anyone's."""
    return await _decide(request, question_id, "unclaim")


@router.post(
    "/{int:question_id}/reassign",
    response={200: Question, **problems(401, 403, 404, 409, 413, 415, 422)},
    summary="Reassign a question",
)
async def reassign(request: HttpRequest, question_id: int, body: ReassignBody) -> Any:
    """Make `to` the ones who may answer (needs `wfapp.reassign_interrupt`); an unknown user or
    group is a 422 naming it, and nothing changes."""
    return await _decide(request, question_id, "reassign", list(body.to))
