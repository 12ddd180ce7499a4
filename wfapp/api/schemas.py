"""The API's documents: request bodies (unknown fields refused) and responses, as pydantic models.

Timestamps are aware UTC datetimes, so they serialize as ISO 8601 with a ``Z``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from ninja import Schema
from pydantic import ConfigDict, Field, field_validator

from engine.runner import MAX_REASON_CHARS
from wfapp.human.comments import MAX_COMMENT, clean_text
from wfapp.models import Interrupt, Session
from wfapp.run_labels import outcome_of
from wfapp.runs.failures import EditedInput as EditedInputRow
from wfapp.runs.reports import interrupt_report

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
    digest: str | None = Field(
        None,
        min_length=64,
        max_length=64,
        pattern="^[0-9a-f]{64}$",
        description="The question's `digest` as you showed it to the person answering: refused (409 "
        "`asking-closed`) when the question shows something else. Optional: the answer is bound to the "
        "question of the URL (its asking) either way.",
    )
    override_claim: bool = Field(
        False,
        description="Answer over another user's claim (superusers and holders of "
        "`wfapp.reassign_interrupt` only): without it such an answer is refused (409 `claimed`, "
        '"mia holds this: answer anyway?"); the override is recorded as your comment on the question.',
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
    request_seq: int = Field(
        description="Where in the run's log it was asked: a loop may ask the same `interrupt_id` again, "
        "each asking is its own question with its own `id`."
    )
    digest: str = Field(
        description="A digest of what the question shows (message, payload, schema); send it back with "
        "the answer so that an answer to anything else is refused. Empty for questions asked before digests."
    )
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
    summary: str = Field(
        description='What the run is about, in words, made from its input ("Ana: 2,300.00 travel"); '
        '"" for runs started before summaries.'
    )
    status: RunStatusName
    outcome: str | None = Field(
        description='How a completed run ended, from its output ("approved", "rejected"); null for '
        "a run not completed or whose output says nothing more."
    )
    created_by: str | None
    created_at: datetime
    updated_at: datetime
    last_seq: int = Field(description="The seq of the run's latest event.")


class Cancellation(Schema):
    by: str = Field(description='Who cancelled the run ("" when not named).')
    reason: str = Field(description='Why, as given with the cancel ("" when none).')


class EditedInput(Schema):
    seq: int = Field(description="The `retry` event that gave the input.")
    node: str = Field(description="The node whose input was replaced (its path).")
    by: str
    reason: str


class Run(RunSummary):
    input: Any
    output: Any
    error: dict[str, Any] | None = Field(description="`{type, message}` when the run failed.")
    cancelled: Cancellation | None = Field(
        None, description="Who cancelled the run and why; null unless cancelled."
    )
    pending: list[Question] = Field(description="Its open questions that you may answer.")
    edited_inputs: list[EditedInput] = Field(
        description="Retries that replaced a failed node's input, oldest first: what the run did after "
        "each derives from that input, not only from what it was given and what people answered."
    )
    output_from_edited_input: bool = Field(
        description="The run completed after an edited input: its `output` derives from it."
    )


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
        "summary": session.summary,
        "status": session.status,
        "outcome": outcome_of(session.workflow, session.version, session.status, session.output),
        "created_by": session.created_by.get_username() if session.created_by else None,
        "created_at": session.created_at,
        "updated_at": session.updated_at,
        "last_seq": session.last_seq,
    }


def run(
    session: Session, pending: list[Interrupt], cancelled: dict[str, str], edited: list[EditedInputRow]
) -> dict[str, Any]:
    return {
        **run_summary(session),
        "input": session.input,
        "output": session.output,
        "error": session.error,
        "cancelled": cancelled or None,
        "pending": [question(row) for row in pending],
        "edited_inputs": [{"seq": e.seq, "node": e.node, "by": e.actor, "reason": e.reason} for e in edited],
        "output_from_edited_input": bool(edited) and session.status == "completed",
    }


def event(row: dict[str, Any], *, tracebacks: bool = True) -> dict[str, Any]:
    """An event as the API shows it; without ``tracebacks``, an error's traceback is left out."""
    data = row["data"]
    if not tracebacks and isinstance(data, dict) and isinstance(data.get("error"), dict):
        data = {**data, "error": {k: v for k, v in data["error"].items() if k != "traceback"}}
    return {**row, "data": data, "timestamp": datetime.fromtimestamp(row["timestamp"], UTC)}


def comment(data: dict[str, Any]) -> dict[str, Any]:
    """``wfapp.human.comments.comments``' plain data as the API's ``Comment``."""
    return {
        "seq": data["seq"],
        "by": data["by"],
        "at": datetime.fromtimestamp(data["at"], UTC),
        "text": data["text"],
        "interrupt_id": data["question"],
    }
