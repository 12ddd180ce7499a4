"""Answer a question: check who may, record the answer (first answer wins; every refused attempt
on a known question recorded in ``AnswerAttempt``), then have the run advanced in the background.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async

from engine import Asking, Runner
from engine.errors import (
    AskingChangedError,
    AskingClosedError,
    ConcurrencyError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    SessionStateError,
    UnknownInterruptError,
    ValueLimitError,
)
from engine.limits import check_input
from wfapp.errors import (
    ClaimHeldError,
    NotAssignedError,
    RejectionReasonError,
    RunFailedError,
    RunStateError,
    UnknownRunError,
)
from wfapp.human import audit, rejections
from wfapp.human.assignment import overridden_claim
from wfapp.human.audit import actor_name
from wfapp.human.permissions import (
    answer_refusal,
    can_answer,
    can_view,
    require,
)
from wfapp.models import AttemptOutcome, Interrupt, RunStatus, Session
from wfapp.registry import get_workflow
from wfapp.runs import dispatch, runtime
from wfapp.runs.failures import failed_node
from wfapp.store.cache import FOLDED
from wfapp.store.events import DjangoEventStore
from wfapp.store.rows import pending_row, session_row

# A worker appended meanwhile: the action checks against the newer log and tries again, this often.
# One bound for every operator action on a run (answering here; cancel and retry in
# ``interventions``, which imports it from this lower module): each appends to the run's log
# under the same optimistic check and loses the same race to the same writers, so how often it
# tries again before "too busy" is one figure, not one per action.
CONFLICT_RETRIES = 20


async def _refused(
    session_id: str,
    interrupt_id: str,
    user: Any,
    value: Any,
    outcome: AttemptOutcome,
    detail: str,
    asking: Asking | None = None,
) -> None:
    await sync_to_async(audit.record)(session_id, interrupt_id, user, value, outcome, detail, asking)


async def _already_answered(
    session_id: str, interrupt_id: str, user: Any, value: Any, refused: Exception, asking: Asking | None
) -> InterruptAlreadyAnswered | None:
    """The error naming who answered first and when, if someone did (the attempt recorded)."""
    first = await sync_to_async(audit.winner)(session_id, interrupt_id, asking)
    by, at = first if first is not None else (None, None)
    if isinstance(refused, InterruptAlreadyAnswered):
        by, at = by or refused.answered_by, at or refused.answered_at
    elif first is None:
        return None
    outcome = AttemptOutcome.ALREADY_ANSWERED
    await _refused(session_id, interrupt_id, user, value, outcome, str(refused), asking)
    return InterruptAlreadyAnswered(interrupt_id, by, at)


def _answerable_session(
    session_id: str, interrupt_id: str, user: Any, value: Any, override_claim: bool = False
) -> tuple[Session, str | None]:
    """The run, once ``user`` may answer this question (a refusal on a known question is
    recorded), and whose claim the answer overrides (None: nobody's); a run ``user`` may not
    view is unknown to them."""
    session = session_row(session_id)
    overridden = None
    if can_answer(user, session.workflow):
        overridden = _check_assigned(session_id, interrupt_id, user, value, override_claim)
        _check_not_failed(session, interrupt_id, user, value)
    else:
        who = actor_name(user) or "An anonymous user"
        audit.record(
            session_id,
            interrupt_id,
            user,
            value,
            AttemptOutcome.FORBIDDEN,
            f"{who} may not answer interrupts of {session.workflow!r}",
        )
        if not can_view(user, session.workflow):
            raise UnknownRunError(session_id)
        require(False, user, f"answer interrupts of {session.workflow!r}")
    return session, overridden


def _check_assigned(
    session_id: str, interrupt_id: str, user: Any, value: Any, override_claim: bool = False
) -> str | None:
    """Refuse (and record) an answer by someone the question's assignees, claim or quorum
    exclude, or one over another's claim not confirmed (``ClaimHeldError``); return whose claim
    a confirmed answer overrides."""
    row = pending_row(session_id, interrupt_id)
    if row is None:
        return None
    reason = answer_refusal(user, row)
    who = actor_name(user)
    if reason is not None:
        audit.record(session_id, interrupt_id, user, value, AttemptOutcome.FORBIDDEN, f"{who}: {reason}")
        raise NotAssignedError(f"{who} may not answer: {reason}")
    holder = overridden_claim(user, row)
    if holder is not None and not override_claim:
        held = ClaimHeldError(holder)
        audit.record(session_id, interrupt_id, user, value, AttemptOutcome.FORBIDDEN, f"{who}: {held}")
        raise held
    return holder


def _check_not_failed(session: Session, interrupt_id: str, user: Any, value: Any) -> None:
    """Refuse (and record) an answer to a question of a failed run: the engine would take it
    as a retry of the failed node, which only an explicit retry (``interventions``) may be."""
    if session.status != RunStatus.FAILED:
        return
    refused = RunFailedError(failed_node(session.pk))
    audit.record(session.pk, interrupt_id, user, value, AttemptOutcome.REFUSED, str(refused))
    raise refused


async def answer_interrupt(
    session_id: str,
    interrupt_id: str,
    value: Any,
    *,
    user: Any,
    advance: bool = True,
    reason: str | None = None,
    asking: Asking | None = None,
    override_claim: bool = False,
) -> runtime.Turn | None:
    """Record an answer (first answer wins), then advance the run in the background.

    ``asking`` binds the answer to that asking of the question (its request seq, and the digest
    of what the answerer was shown): the store records it on that asking only, while it waits;
    else ``InterruptAlreadyAnswered``, ``AskingClosedError`` (asked again or withdrawn since)
    or ``AskingChangedError`` (shown something else), and nothing changes. Every page, the
    API, bulk answers, answer links and the CLI give it; without it the answer goes to the
    asking pending now (engine callers of old).

    Returns the turn that takes the answer up when it runs in this process (embedded mode; a
    future of its result, see ``Runtime.kick``), None when it runs elsewhere (a worker's job,
    deferred with the answer, or the next sweep) or ``advance`` is False.

    An answer by someone who may override claims (``assignment.may_override_claims``) to a
    question another user holds is refused (``ClaimHeldError``: "mia holds this: answer
    anyway?") unless ``override_claim``; an override is recorded as the answerer's comment on
    the question ("Answered over mia's claim."), and the closed question says so.

    With ``reason``, the answer is an approve/reject question's rejection with that reason
    (``wfapp.human.rejections``; ``BadRequest`` when it is not one, or the reason is empty).

    A question of a failed run is not answered: ``RunFailedError`` (the run failed at a node;
    retry it first), as the engine would take the answer as a silent retry of that node.

    Raises ``NotPermitted``, ``UnknownRunError``, ``engine.errors.UnknownInterruptError``,
    ``InvalidAnswerError`` (``.field_errors``), ``InterruptAlreadyAnswered`` (``.answered_by``,
    ``.answered_at``: who answered first, and when), ``SessionStateError`` or ``RunStateError``
    (too busy), or ``engine.errors.ValueLimitError`` (too deep, too large, a NUL: recorded
    without the value, which the log could not keep); every refused attempt on a known
    interrupt is recorded in ``AnswerAttempt``.

    Whether someone else answered first is decided from the inbox read after the engine
    refused: a loser that finds the run already completed, or the question no longer pending,
    still learns who won and when.
    """
    try:
        check_input(value, "The answer")
    except ValueLimitError as refused:
        outcome = AttemptOutcome.TOO_LARGE if refused.rule == "size" else AttemptOutcome.INVALID
        await sync_to_async(audit.record)(session_id, interrupt_id, user, None, outcome, str(refused), asking)
        raise
    session, overridden = await sync_to_async(_answerable_session)(
        session_id, interrupt_id, user, value, override_claim
    )
    to_comment = None
    if reason is not None:
        row = await sync_to_async(pending_row)(session_id, interrupt_id)
        if row is not None:
            try:
                value, to_comment = rejections.with_reason(row.response_schema, value, reason)
            except RejectionReasonError as refused:
                await _refused(
                    session_id, interrupt_id, user, value, AttemptOutcome.INVALID, str(refused), asking
                )
                raise
    runner = Runner(get_workflow(session.workflow), store=DjangoEventStore(), folded=FOLDED)
    pin = {interrupt_id: asking} if asking is not None else None
    for _ in range(CONFLICT_RETRIES):
        try:
            await runner.answer(session_id, {interrupt_id: value}, actor=actor_name(user), asking=pin)
            break
        except ConcurrencyError:
            continue  # a worker appended meanwhile: validate against the newer log and try again
        except (AskingClosedError, AskingChangedError) as stale:
            await _refused(session_id, interrupt_id, user, value, AttemptOutcome.STALE, str(stale), asking)
            raise
        except (InterruptAlreadyAnswered, SessionStateError, UnknownInterruptError) as refused:
            first = await _already_answered(session_id, interrupt_id, user, value, refused, asking)
            if first is not None:
                raise first from None
            await _refused(
                session_id, interrupt_id, user, value, AttemptOutcome.REFUSED, str(refused), asking
            )
            raise
        except InvalidAnswerError as invalid:
            await _refused(
                session_id, interrupt_id, user, value, AttemptOutcome.INVALID, str(invalid), asking
            )
            raise
    else:
        busy = f"Run {session_id!r} is too busy to take the answer; try again"
        await _refused(session_id, interrupt_id, user, value, AttemptOutcome.BUSY, busy, asking)
        raise RunStateError(busy)
    if to_comment is not None:
        await _rejection_comment(session_id, interrupt_id, user, to_comment)
    if overridden is not None:
        await _question_comment(session_id, interrupt_id, user, f"Answered over {overridden}'s claim.")
    if not advance:
        return None
    return dispatch.after_answer(session_id)  # workers mode queued the advance with the answer


async def _rejection_comment(session_id: str, interrupt_id: str, user: Any, reason: str) -> None:
    """A rejection's reason the answer has no field for: the run's comment on that question."""
    await _question_comment(session_id, interrupt_id, user, f"Rejected: {reason}")


async def _question_comment(session_id: str, interrupt_id: str, user: Any, text: str) -> None:
    """The run's comment by ``user`` on its latest asking of ``interrupt_id``."""
    from wfapp.human.comments import add_comment

    pk = (
        await Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id)
        .order_by("-request_seq")
        .values_list("pk", flat=True)
        .afirst()
    )
    await add_comment(session_id, text, user=user, interrupt_pk=pk)
