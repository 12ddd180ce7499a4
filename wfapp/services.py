"""The business actions: start, answer, cancel and retry runs (claims on questions: ``wfapp.claims``).
Views, consumers and the CLI call these.

Each action checks everything first and raises a ``ValueError`` subclass (from
``wfapp.errors`` or ``engine.errors``) without writing anything when the request is bad.
Given a ``user``, each action enforces that user's permission (``wfapp.permissions``) and
raises ``NotPermitted``; ``user=None`` is the trusted system (the CLI without ``--user``),
except for answers, which always need a user who may answer.
Execution happens in the background in the process's runtime (``wfapp.runtime``); the
actions return as soon as their own commit is done.
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine import Runner
from engine.errors import (
    ConcurrencyError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    InvalidInputError,
    SessionStateError,
    UnknownInterruptError,
    ValueLimitError,
)
from engine.limits import check_input
from engine.runner import check_reason

from . import audit, doorbell, failures, rejections, runtime
from . import lease as leases
from .audit import actor_name
from .errors import (
    InputValidationError,
    NotAssignedError,
    RejectionReasonError,
    RunStateError,
    UnknownRunError,
)
from .inputs import schema_errors
from .lease import Lease
from .models import AttemptOutcome, Interrupt, InterruptStatus, RunStatus, Session
from .permissions import (
    answer_refusal,
    can_answer,
    can_cancel,
    can_retry,
    can_view,
    check_start,
    require,
)
from .registry import get_workflow
from .store import DjangoEventStore
from .store_cache import FOLDED
from .worker import dispatch

_CONFLICT_RETRIES = 20


def session_row(session_id: str) -> Session:
    """The run's row; ``UnknownRunError`` when there is none."""
    try:
        return Session.objects.get(pk=session_id)
    except Session.DoesNotExist:
        raise UnknownRunError(session_id) from None


def _permitted_session(session_id: str, user: Any, allowed: Any, action: str) -> Session:
    """The run, once ``user`` (unless None, the trusted system) passes ``allowed(user, session)``;
    a run ``user`` may not view is unknown to them."""
    session = session_row(session_id)
    if user is not None:
        if not can_view(user, session.workflow):
            raise UnknownRunError(session_id)
        require(allowed(user, session), user, action)
    return session


def _check_start(user: Any, workflow: str) -> None:
    if user is not None:  # None: the trusted system
        check_start(user, workflow)


# -- start ------------------------------------------------------------------------------------


def _create(
    workflow: Any, node_input: Any, user: Any, owner: str | None, session_id: str, advance: bool = False
) -> Lease | None:
    fields: dict[str, Any] = {}
    if owner is not None:
        expires = timezone.now() + timedelta(seconds=float(settings.WFAPP_LEASE_SECONDS))
        fields = {"lease_owner": owner, "lease_epoch": 1, "lease_expires_at": expires}
    with transaction.atomic():
        Session.objects.create(
            id=session_id,
            workflow=workflow.name,
            version=workflow.version,
            input=node_input,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            **fields,
        )
        if advance:
            dispatch.advance_later(session_id)  # in this transaction (workers mode) or after it
    return Lease(session_id, owner, 1) if owner is not None else None


async def create_run(
    workflow: str, node_input: Any, *, user: Any = None, owner: str | None = None, advance: bool = False
) -> tuple[str, Lease | None]:
    """Validate the input and record a new run on the workflow's newest version; with ``owner``,
    hold its lease for that owner; with ``advance``, have it executed in the background.

    Raises ``UnknownWorkflowError``, ``NotPermitted`` (``user`` may not start it),
    ``InputValidationError`` or ``engine.errors.ValueLimitError`` (what the log cannot keep).
    """
    check_input(node_input, "The workflow input")  # before the schema: it may not even be walkable
    wf = get_workflow(workflow)
    await sync_to_async(_check_start)(user, wf.name)
    errors = schema_errors(wf.input_schema, node_input)
    if errors:
        raise InputValidationError(workflow, errors)
    session_id = uuid.uuid4().hex
    lease = await sync_to_async(_create)(wf, node_input, user, owner, session_id, advance)
    await doorbell.ring(session_id, 0, runs=True)
    return session_id, lease


async def start_run(workflow: str, node_input: Any, *, user: Any = None) -> str:
    """Start a run of a registered workflow in the background and return its id at once."""
    session_id, _ = await create_run(workflow, node_input, user=user, advance=True)
    return session_id


# -- answer -----------------------------------------------------------------------------------


async def _refused(
    session_id: str, interrupt_id: str, user: Any, value: Any, outcome: AttemptOutcome, detail: str
) -> None:
    await sync_to_async(audit.record)(session_id, interrupt_id, user, value, outcome, detail)


async def _already_answered(
    session_id: str, interrupt_id: str, user: Any, value: Any, refused: Exception
) -> InterruptAlreadyAnswered | None:
    """The error naming who answered first and when, if someone did (the attempt recorded)."""
    first = await sync_to_async(audit.winner)(session_id, interrupt_id)
    by, at = first if first is not None else (None, None)
    if isinstance(refused, InterruptAlreadyAnswered):
        by, at = by or refused.answered_by, at or refused.answered_at
    elif first is None:
        return None
    await _refused(session_id, interrupt_id, user, value, AttemptOutcome.ALREADY_ANSWERED, str(refused))
    return InterruptAlreadyAnswered(interrupt_id, by, at)


def _answerable_session(session_id: str, interrupt_id: str, user: Any, value: Any) -> Session:
    """The run, once ``user`` may answer this question (a refusal on a known question is
    recorded); a run ``user`` may not view is unknown to them."""
    session = session_row(session_id)
    if can_answer(user, session.workflow):
        _check_assigned(session_id, interrupt_id, user, value)
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
    return session


def pending_row(session_id: str, interrupt_id: str) -> Interrupt | None:
    """The question's inbox row while it is pending (None once answered, withdrawn or cancelled)."""
    return (
        Interrupt.objects.select_related("session")
        .filter(session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.PENDING)
        .first()
    )


def _check_assigned(session_id: str, interrupt_id: str, user: Any, value: Any) -> None:
    """Refuse (and record) an answer by someone the question's assignees, claim or quorum exclude."""
    row = pending_row(session_id, interrupt_id)
    reason = answer_refusal(user, row) if row is not None else None
    if reason is not None:
        who = actor_name(user)
        audit.record(session_id, interrupt_id, user, value, AttemptOutcome.FORBIDDEN, f"{who}: {reason}")
        raise NotAssignedError(f"{who} may not answer: {reason}")


async def answer_interrupt(
    session_id: str,
    interrupt_id: str,
    value: Any,
    *,
    user: Any,
    advance: bool = True,
    reason: str | None = None,
) -> runtime.Turn | None:
    """Record an answer (first answer wins), then advance the run in the background.

    Returns the turn that takes the answer up when it runs in this process (embedded mode; a
    future of its result, see ``Runtime.kick``), None when it runs elsewhere (a worker's job,
    deferred with the answer, or the next sweep) or ``advance`` is False.

    With ``reason``, the answer is an approve/reject question's rejection with that reason
    (``wfapp.rejections``; ``BadRequest`` when it is not one, or the reason is empty).

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
        await sync_to_async(audit.record)(session_id, interrupt_id, user, None, outcome, str(refused))
        raise
    session = await sync_to_async(_answerable_session)(session_id, interrupt_id, user, value)
    to_comment = None
    if reason is not None:
        row = await sync_to_async(pending_row)(session_id, interrupt_id)
        if row is not None:
            try:
                value, to_comment = rejections.with_reason(row.response_schema, value, reason)
            except RejectionReasonError as refused:
                await _refused(session_id, interrupt_id, user, value, AttemptOutcome.INVALID, str(refused))
                raise
    runner = Runner(get_workflow(session.workflow), store=DjangoEventStore(), folded=FOLDED)
    for _ in range(_CONFLICT_RETRIES):
        try:
            await runner.answer(session_id, {interrupt_id: value}, actor=actor_name(user))
            break
        except ConcurrencyError:
            continue  # a worker appended meanwhile: validate against the newer log and try again
        except (InterruptAlreadyAnswered, SessionStateError, UnknownInterruptError) as refused:
            first = await _already_answered(session_id, interrupt_id, user, value, refused)
            if first is not None:
                raise first from None
            await _refused(session_id, interrupt_id, user, value, AttemptOutcome.REFUSED, str(refused))
            raise
        except InvalidAnswerError as invalid:
            await _refused(session_id, interrupt_id, user, value, AttemptOutcome.INVALID, str(invalid))
            raise
    else:
        busy = f"Run {session_id!r} is too busy to take the answer; try again"
        await _refused(session_id, interrupt_id, user, value, AttemptOutcome.BUSY, busy)
        raise RunStateError(busy)
    if to_comment is not None:
        await _rejection_comment(session_id, interrupt_id, user, to_comment)
    if not advance:
        return None
    return dispatch.after_answer(session_id)  # workers mode queued the advance with the answer


async def _rejection_comment(session_id: str, interrupt_id: str, user: Any, reason: str) -> None:
    """A rejection's reason the answer has no field for: the run's comment on that question."""
    from .comments import add_comment

    pk = (
        await Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id)
        .order_by("-request_seq")
        .values_list("pk", flat=True)
        .afirst()
    )
    await add_comment(session_id, f"Rejected: {reason}", user=user, interrupt_pk=pk)


# -- cancel and retry -------------------------------------------------------------------------------


async def cancel_run(session_id: str, *, user: Any = None, reason: str = "") -> None:
    """Cancel a run for good, recording who did and ``reason`` (optional); a worker executing
    it elsewhere is fenced off by a new lease. A reason the log cannot keep (over
    ``engine.runner.MAX_REASON_CHARS``, a NUL) raises ``ValueLimitError`` and changes nothing."""
    reason = reason.strip()
    if reason:
        check_reason(reason)
    session = await sync_to_async(_permitted_session)(session_id, user, can_cancel, "cancel runs")
    if session.status in (RunStatus.COMPLETED, RunStatus.CANCELLED):
        raise RunStateError(f"Run {session_id!r} is {session.status}; it cannot be cancelled")
    actor = actor_name(user)
    if await runtime.current().cancel_local(session_id, actor, reason or None) is not None:
        return
    ttl = float(settings.WFAPP_LEASE_SECONDS)
    owner = leases.new_owner()
    lease = await sync_to_async(leases.claim)(session_id, owner, ttl, force=True)
    if lease is None:
        raise UnknownRunError(session_id)
    try:
        runner = Runner(get_workflow(session.workflow), store=DjangoEventStore(lease), folded=FOLDED)
        for _ in range(_CONFLICT_RETRIES):
            try:
                await runner.cancel(session_id, actor=actor, reason=reason or None)
                return
            except ConcurrencyError:
                continue
            except SessionStateError as refused:
                raise RunStateError(str(refused)) from None
        raise RunStateError(f"Run {session_id!r} is too busy to cancel; try again")
    finally:
        await sync_to_async(leases.drop)(lease)


async def check_retry(session_id: str, *, user: Any = None) -> Session:
    """The run, unless it does not exist, has not failed or ``user`` (unless None) may not retry it."""
    session = await sync_to_async(_permitted_session)(session_id, user, can_retry, "retry runs")
    if session.status != RunStatus.FAILED:
        raise RunStateError(f"Run {session_id!r} is {session.status}; only a failed run can be retried")
    return session


async def record_retry(
    session_id: str,
    *,
    user: Any = None,
    node: str | None = None,
    node_input: Any = None,
    edited: bool = False,
    reason: str = "",
) -> None:
    """Record in the log that ``user`` retries the failed run (a ``retry`` event), executing nothing.

    ``node``
    names the failed node the operator retries (one of ``failures.node_failures``); with
    ``edited``, ``node_input`` is that node's input from now on, checked against the node's
    input schema; ``reason`` (optional) is kept with the retry and shown beside it. Raises
    ``NotPermitted``, ``UnknownRunError``, ``RunStateError`` (not failed),
    ``engine.errors.NotFailedNodeError``, ``InputValidationError`` (``field_errors``) or
    ``ValueLimitError`` (an input or a reason the log cannot keep); nothing is written then.
    """
    reason = reason.strip()
    if reason:
        check_reason(reason)
    session = await check_retry(session_id, user=user)
    workflow = get_workflow(session.workflow, session.version or None)
    if edited:
        if node is None:
            raise InputValidationError(
                session.workflow, {"": ["An edited input needs the failed node it is for"]}
            )
        check_input(node_input, "The edited input")
        errors = schema_errors(failures.input_schema(workflow, node), node_input)
        if errors:
            raise InputValidationError(session.workflow, errors)
    runner = Runner(workflow, store=DjangoEventStore(), folded=FOLDED)
    for _ in range(_CONFLICT_RETRIES):
        try:
            await runner.record_retry(
                session_id,
                node,
                node_input if edited else None,
                actor=actor_name(user),
                reason=reason or None,
            )
            break
        except ConcurrencyError:
            continue  # someone retried or cancelled meanwhile: check against the newer log
        except SessionStateError as refused:
            raise RunStateError(str(refused)) from None
        except InvalidInputError as invalid:
            raise InputValidationError(session.workflow, {"": [str(invalid)]}) from None
    else:
        raise RunStateError(f"Run {session_id!r} is too busy to retry; try again")


async def retry_run(
    session_id: str,
    *,
    user: Any = None,
    node: str | None = None,
    node_input: Any = None,
    edited: bool = False,
    reason: str = "",
) -> None:
    """``record_retry``, then have the run advanced in the background: completed nodes replay,
    the failed ones run again (the named node with its edited input)."""
    await record_retry(session_id, user=user, node=node, node_input=node_input, edited=edited, reason=reason)
    # A job already queued for the run advances it too: the retry is in the log either way.
    await sync_to_async(dispatch.advance_later)(session_id, retry=True)
