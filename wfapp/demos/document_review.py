"""``document_review``: a dynamic workflow that drafts, asks a reviewer, revises, and loops.

The loop ends when the reviewer approves or after ``MAX_ROUNDS`` rounds. The orchestrator
re-runs on resume; finished drafts, reviews and revisions replay from the log.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from engine import START, Context, RequestInput, Workflow, node

MAX_ROUNDS = 5


class DocumentRequest(BaseModel):
    title: str = Field(min_length=1)
    topic: str = Field(min_length=1)


class Review(BaseModel):
    approved: bool
    feedback: str = ""


@node(name="write_draft")
def write_draft(node_input: dict[str, Any]) -> str:
    title, topic = node_input["title"], node_input["topic"]
    return (
        f"# {title}\n\n"
        f"This document explains {topic}. It covers why {topic} matters, how it works today, "
        f"and what we propose to change."
    )


@node(name="ask_reviewer", rerun_on_resume=False)
async def ask_reviewer(node_input: dict[str, Any]):  # type: ignore[no-untyped-def]
    yield RequestInput(
        interrupt_id=f"review-{node_input['round']}",
        message=f"Review round {node_input['round']} of {MAX_ROUNDS}: approve the draft, or give feedback",
        payload={"round": node_input["round"], "draft": node_input["draft"]},
        response_schema=Review,
    )


@node(name="revise")
def revise(node_input: dict[str, Any]) -> str:
    feedback = node_input["feedback"].strip() or "general polish"
    return f'{node_input["draft"]}\n\nRevision {node_input["round"]}: addressed the feedback "{feedback}".'


@node(name="review_loop", rerun_on_resume=True)
async def review_loop(ctx: Context, node_input: DocumentRequest) -> dict[str, Any]:
    draft = await ctx.run_node(write_draft, node_input.model_dump())
    history: list[dict[str, Any]] = []
    for round_number in range(1, MAX_ROUNDS + 1):
        answer = await ctx.run_node(ask_reviewer, {"round": round_number, "draft": draft})
        review = answer if isinstance(answer, Review) else Review.model_validate(answer)
        history.append({"round": round_number, "approved": review.approved, "feedback": review.feedback})
        if review.approved:
            return {
                "title": node_input.title,
                "approved": True,
                "rounds": round_number,
                "text": draft,
                "reviews": history,
            }
        draft = await ctx.run_node(
            revise, {"draft": draft, "feedback": review.feedback, "round": round_number}
        )
    return {
        "title": node_input.title,
        "approved": False,
        "rounds": MAX_ROUNDS,
        "text": draft,
        "reviews": history,
    }


document_review = Workflow(
    name="document_review",
    description=f"Draft a document, then review and revise it until a reviewer approves (at most {MAX_ROUNDS} rounds).",
    edges=[(START, review_loop)],
)
