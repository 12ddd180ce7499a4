"""Claims on pending questions (issue 17): claim, unclaim and reassign, each an event of the run
whose inbox row follows in the same transaction (``DjangoEventStore``)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from engine import Runner
from engine.errors import AskingClosedError, SessionStateError, UnknownInterruptError
from wfapp.errors import (
    InputValidationError,
    NotAssignedError,
    NotPermitted,
    QuestionClosedError,
    RunStateError,
    UnknownRunError,
)
from wfapp.human.audit import actor_name
from wfapp.human.permissions import answer_refusal, can_answer, can_reassign, can_view, require
from wfapp.models import Session
from wfapp.registry import get_workflow
from wfapp.store import inbox_rows
from wfapp.store.cache import FOLDED
from wfapp.store.events import DjangoEventStore
from wfapp.store.rows import pending_row, session_row


def _decidable(
    session_id: str,
    interrupt_id: str,
    user: Any,
    decision: str,
    users: list[str] | None,
    request_seq: int | None,
) -> Session:
    """The run, once ``user`` may take ``decision`` on the pending question (that asking of it,
    with ``request_seq``); raises otherwise."""
    row = pending_row(session_id, interrupt_id)
    if row is None or (request_seq is not None and row.request_seq != request_seq):
        session = session_row(session_id)
        raise QuestionClosedError(session.pk, interrupt_id)
    if decision == "reassign":
        require(can_reassign(user), user, "reassign questions")
        unknown = inbox_rows.unknown_names_sync(list(users or []))
        if unknown:
            raise InputValidationError(
                row.workflow, {"users": [f"no known user or group: {', '.join(unknown)}"]}
            )
    elif not can_answer(user, row.workflow):
        if not can_view(user, row.workflow):
            raise UnknownRunError(session_id)
        require(False, user, f"answer interrupts of {row.workflow!r}")
    elif decision == "claim":
        reason = answer_refusal(user, row)
        if reason is not None and not row.claimed_by:
            raise NotAssignedError(f"{actor_name(user)} may not claim this question: {reason}")
    return row.session


async def decide_interrupt(
    session_id: str,
    interrupt_id: str,
    decision: str,
    *,
    user: Any,
    users: list[str] | None = None,
    request_seq: int | None = None,
) -> None:
    """Record a ``claim``, ``unclaim`` or ``reassign`` (to ``users``) of a pending question as an
    event of its run; the inbox row follows in the same transaction. With ``request_seq`` the
    decision is bound to that asking of the question, checked in that transaction: once it no
    longer waits (even when its id is asked again), ``QuestionClosedError`` and nothing changes.

    Raises ``NotPermitted`` (only someone who may answer it claims it; only a holder of
    ``wfapp.reassign_interrupt`` reassigns or unclaims for someone else), ``UnknownRunError``,
    ``QuestionClosedError`` (no longer pending), ``InputValidationError`` (an unknown user or group),
    ``engine.errors.InterruptClaimedError`` (held by someone else: one of two claims wins) or
    ``engine.errors.DecisionError``.
    """
    session = await sync_to_async(_decidable)(session_id, interrupt_id, user, decision, users, request_seq)
    actor = actor_name(user)
    if actor is None:
        raise NotPermitted("An anonymous user may not claim questions")
    force = decision == "unclaim" and await sync_to_async(can_reassign)(user)
    runner = Runner(
        get_workflow(session.workflow, session.version or None), store=DjangoEventStore(), folded=FOLDED
    )
    try:
        await runner.decide(
            session_id, interrupt_id, decision, actor, users=users, force=force, request_seq=request_seq
        )
    except (
        UnknownInterruptError,
        AskingClosedError,
    ):  # answered, withdrawn, cancelled or asked again meanwhile
        raise QuestionClosedError(session_id, interrupt_id) from None
    except SessionStateError as refused:
        raise RunStateError(str(refused)) from None


async def claim_interrupt(session_id: str, interrupt_id: str, *, user: Any) -> None:
    """Hold a pending question so that only you answer it (others still see it)."""
    await decide_interrupt(session_id, interrupt_id, "claim", user=user)


async def unclaim_interrupt(session_id: str, interrupt_id: str, *, user: Any) -> None:
    """Let go of a question you hold (an admin may free anyone's)."""
    await decide_interrupt(session_id, interrupt_id, "unclaim", user=user)


async def reassign_interrupt(session_id: str, interrupt_id: str, users: list[str], *, user: Any) -> None:
    """Make ``users`` (user names and ``group:`` names) the ones who may answer (admins only)."""
    await decide_interrupt(session_id, interrupt_id, "reassign", user=user, users=users)
