"""The API's documents: request bodies (unknown fields refused) and responses, as pydantic models.

Timestamps are aware UTC datetimes, so they serialize as ISO 8601 with a ``Z``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator

from engine.runner import MAX_REASON_CHARS
from wfapp.comments import MAX_COMMENT, clean_text
from wfapp.models import Interrupt, Session
from wfapp.reports import interrupt_report

RunStatusName = Literal["running", "waiting", "completed", "failed", "cancelled"]
QuestionStatus = Literal["pending", "answered", "cancelled", "superseded", "withdrawn"]


class _Strict(Schema):
    model_config = ConfigDict(extra="forbid")


class StartBody(_Strict):
    input: Any = Field(description="The workflow's input: it must satisfy the workflow's `input_schema`.")


class AnswerBody(_Strict):
    answer: Any = Field(description="The answer: it must satisfy the question's `response_schema`.")
    reason: str | None = Field(
        None,
        max_length=5000,
        description="Reject an approve/reject question with this reason (the answer must be the rejection).",
    )


class CancelBody(_Strict):
    reason: str = Field(
        "",
        description=f"Why the run is cancelled: kept in its log and shown as the run's `cancelled`; "
        f"at most {MAX_REASON_CHARS} characters.",
    )


class RetryBody(_Strict):
    node: str | None = Field(
        None,
        min_length=1,
        max_length=1000,
        description="Retry only this failed node (its path, as in the run's `error` events); "
        "omitted: every failed node.",
    )
    input: Any = Field(
        None,
        description="The failed `node`'s input from now on (the dashboard's retry with edited "
        "input), checked against the node's input schema; omitted: the input it failed on.",
    )
    reason: str = Field(
        "",
        description=f"Why the run is retried: kept in its log beside the retry; "
        f"at most {MAX_REASON_CHARS} characters.",
    )


class ReassignBody(_Strict):
    to: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1,
        max_length=50,
        description="Who may answer from now on: user names, and group names with the `group:` prefix.",
    )


class QuestionCommentBody(_Strict):
    text: str = Field(
        pattern=r"\S",
        description=f"The comment: at most {MAX_COMMENT} characters once leading and trailing "
        "white space is stripped; not empty.",
    )

    @field_validator("text", mode="before")
    @classmethod
    def _comment_text(cls, value: Any) -> Any:
        # The service's own check (before the pattern, so its message is the one shown).
        return clean_text(value) if isinstance(value, str) else value


class CommentBody(QuestionCommentBody):
    question: int | None = Field(
        None, description="The id of one of the run's questions (`interrupts/{id}`) it is about."
    )


class WorkflowSummary(Schema):
    name: str
    description: str
    input_schema: dict[str, Any] | None = Field(description="JSON Schema of a start's `input`.")


class DeclaredQuestion(Schema):
    node: str = Field(description="The node that asks it.")
    interrupt_id: str | None = Field(description="The id it is asked under; null: chosen at run time.")
    response_schema: dict[str, Any] | None = Field(
        description="JSON Schema its answers must satisfy; null: computed when it is asked."
    )


class Workflow(WorkflowSummary):
    graph: dict[str, Any] = Field(description="The graph: its `nodes` and `edges` (with routes).")
    questions: list[DeclaredQuestion] = Field(
        description="The questions its code declares, read from the code: a question's own "
        "`response_schema` always decides (some are known only when asked)."
    )


class WorkflowList(Schema):
    items: list[WorkflowSummary]


class Question(Schema):
    id: int = Field(description="The question's id in this API (`interrupts/{id}`).")
    interrupt_id: str = Field(description="The id the workflow asked it under.")
    run: str
    workflow: str
    node_path: str
    message: str
    payload: Any
    response_schema: dict[str, Any] | None = Field(description="JSON Schema an answer must satisfy.")
    status: QuestionStatus
    answer: Any
    answered_by: str | None
    answered_at: datetime | None
    assignees: list[str] | None = Field(
        description="Who may answer (user names, `group:` names); null: anyone who may answer the workflow."
    )
    claimed_by: str | None = Field(description="Who holds the question (`claim`); null: no one.")
    due_at: datetime | None = Field(description="When its deadline falls; null: none.")
    approvals_required: int | None = Field(description="Distinct approvals the question needs (a quorum).")
    approvals: list[dict[str, Any]] = Field(
        description="The approvals given so far, in order: `{actor, answer}`."
    )
    created_at: datetime


class QuestionPage(Schema):
    items: list[Question]
    next_cursor: str | None = Field(description="Pass as `after` for the next page; null on the last.")
    count: int = Field(description="How many pending questions match the filters.")


class RunSummary(Schema):
    id: str
    workflow: str
    status: RunStatusName
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    last_seq: int = Field(description="The seq of the run's latest event.")


class Cancellation(Schema):
    by: str = Field(description='Who cancelled the run ("" when not named).')
    reason: str = Field(description='Why, as given with the cancel ("" when none).')


class Run(RunSummary):
    input: Any
    output: Any
    error: dict[str, Any] | None = Field(description="`{type, message}` when the run failed.")
    cancelled: Cancellation | None = Field(
        None, description="Who cancelled the run and why; null unless cancelled."
    )
    pending: list[Question] = Field(description="Its open questions that you may answer.")


class RunPage(Schema):
    items: list[RunSummary]
    next_cursor: str | None = Field(description="Pass as `after` for the next page; null on the last.")
    partial: bool = Field(
        False, description="Always false: a `text` search reads every run (kept for v1 clients)."
    )


class RunEvent(Schema):
    seq: int
    timestamp: datetime
    kind: str
    node_path: str
    author: str
    data: dict[str, Any]


class EventPage(Schema):
    items: list[RunEvent]
    last_seq: int = Field(description="The run's latest seq when this page was read.")
    next_after: int | None = Field(description="Pass as `after` for more; null when none were left.")


class Comment(Schema):
    seq: int = Field(description="Its seq in the run's log (the `comment` event).")
    by: str = Field(description="Who wrote it.")
    at: datetime
    text: str
    interrupt_id: str | None = Field(description="The id of the question it is about; null: the run.")


class CommentList(Schema):
    items: list[Comment] = Field(description="Oldest first.")
    next_after: int | None = Field(
        description="Pass as `after` for the next page; null on the last.",
    )


class AnswerResult(Schema):
    question: Question
    run: Run


class ProblemDocument(Schema):
    """An RFC 9457 problem; types may add members (`errors`, `answered_by`, `answered_at`, `limit`)."""

    model_config = ConfigDict(extra="allow")
    type: str
    title: str
    status: int
    detail: str
    instance: str | None = None


def question(row: Interrupt) -> dict[str, Any]:
    # The CLI's report of an interrupt names it by its interrupt id; the API by its row.
    return {
        **interrupt_report(row),
        "id": row.pk,
        "interrupt_id": row.interrupt_id,
        "run": row.session_id,
        "workflow": row.workflow,
        "created_at": row.created_at,
    }


def run_summary(session: Session) -> dict[str, Any]:
    return {
        "id": session.pk,
        "workflow": session.workflow,
        "status": session.status,
        "created_by": session.created_by.get_username() if session.created_by else None,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "last_seq": session.last_seq,
    }


def run(session: Session, pending: list[Interrupt], cancelled: dict[str, str]) -> dict[str, Any]:
    return {
        **run_summary(session),
        "input": session.input,
        "output": session.output,
        "error": session.error,
        "cancelled": cancelled or None,
        "pending": [question(row) for row in pending],
    }


def event(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, "timestamp": datetime.fromtimestamp(row["timestamp"], UTC)}


def comment(data: dict[str, Any]) -> dict[str, Any]:
    """``wfapp.comments.comments``' plain data as the API's ``Comment``."""
    return {
        "seq": data["seq"],
        "by": data["by"],
        "at": datetime.fromtimestamp(data["at"], UTC),
        "text": data["text"],
        "interrupt_id": data["question"],
    }
