"""The business actions: start, answer, cancel and retry runs. Views, consumers and the CLI call these.

Each action checks everything first and raises a ``ValueError`` subclass (from
``wfapp.errors`` or ``engine.errors``) without writing anything when the request is bad.
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
    SessionStateError,
)

from . import doorbell, runtime
from . import lease as leases
from .errors import InputValidationError, NotAllowedError, RunStateError, UnknownRunError
from .inputs import schema_errors
from .lease import Lease
from .models import AnswerAttempt, AttemptOutcome, Interrupt, InterruptStatus, RunStatus, Session
from .registry import get_workflow
from .store import DjangoEventStore

ANSWER_PERMISSION = "wfapp.answer_interrupt"
_CONFLICT_RETRIES = 20


def actor_name(user: Any) -> str | None:
    """How events and audit records name ``user`` (None for no user)."""
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    return str(user.get_username())


def can_answer(user: Any) -> bool:
    """Whether ``user`` may answer interrupts (synchronous: it may query permissions)."""
    return bool(
        user is not None and getattr(user, "is_authenticated", False) and user.has_perm(ANSWER_PERMISSION)
    )


def _session(session_id: str) -> Session:
    try:
        return Session.objects.get(pk=session_id)
    except Session.DoesNotExist:
        raise UnknownRunError(session_id) from None


# -- start ------------------------------------------------------------------------------------


def _create(workflow: str, node_input: Any, user: Any, owner: str | None, session_id: str) -> Lease | None:
    fields: dict[str, Any] = {}
    if owner is not None:
        expires = timezone.now() + timedelta(seconds=float(settings.WFAPP_LEASE_SECONDS))
        fields = {"lease_owner": owner, "lease_epoch": 1, "lease_expires_at": expires}
    with transaction.atomic():
        Session.objects.create(
            id=session_id,
            workflow=workflow,
            input=node_input,
            created_by=user if getattr(user, "is_authenticated", False) else None,
            **fields,
        )
    return Lease(session_id, owner, 1) if owner is not None else None


async def create_run(
    workflow: str, node_input: Any, *, user: Any = None, owner: str | None = None
) -> tuple[str, Lease | None]:
    """Validate the input and record a new run; with ``owner``, hold its lease for that owner."""
    wf = get_workflow(workflow)
    errors = schema_errors(wf.input_schema, node_input)
    if errors:
        raise InputValidationError(workflow, errors)
    session_id = uuid.uuid4().hex
    lease = await sync_to_async(_create)(wf.name, node_input, user, owner, session_id)
    await doorbell.ring(session_id, 0, runs=True)
    return session_id, lease


async def start_run(workflow: str, node_input: Any, *, user: Any = None) -> str:
    """Start a run of a registered workflow in the background and return its id at once."""
    session_id, _ = await create_run(workflow, node_input, user=user)
    runtime.current().kick(session_id)
    return session_id


# -- answer -----------------------------------------------------------------------------------


def _attempt(
    session_id: str, interrupt_id: str, actor: str | None, value: Any, outcome: str, detail: str
) -> None:
    AnswerAttempt.objects.create(
        session_id=session_id,
        interrupt_id=interrupt_id,
        actor=actor or "",
        value=value,
        outcome=outcome,
        detail=detail,
    )


def _first_answer(session_id: str, interrupt_id: str) -> tuple[str | None, Any]:
    row = (
        Interrupt.objects.filter(
            session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.ANSWERED
        )
        .order_by("-request_seq")
        .values("answered_by", "answered_at")
        .first()
    )
    return (row["answered_by"], row["answered_at"]) if row else (None, None)


def _answer_target(session_id: str, interrupt_id: str, user: Any) -> tuple[Session, str | None, str | None]:
    """The run, the actor, and the inbox status of the interrupt's latest request (None if never asked)."""
    if not can_answer(user):
        raise NotAllowedError(f"{actor_name(user) or 'An anonymous user'} may not answer interrupts")
    session = _session(session_id)
    status = (
        Interrupt.objects.filter(session_id=session_id, interrupt_id=interrupt_id)
        .exclude(status=InterruptStatus.SUPERSEDED)
        .order_by("-request_seq")
        .values_list("status", flat=True)
        .first()
    )
    return session, actor_name(user), status


async def answer_interrupt(
    session_id: str, interrupt_id: str, value: Any, *, user: Any, advance: bool = True
) -> None:
    """Record an answer (first answer wins), then advance the run in the background.

    Raises ``NotAllowedError``, ``UnknownRunError``, ``engine.errors.UnknownInterruptError``,
    ``InvalidAnswerError`` (``.field_errors``), ``InterruptAlreadyAnswered`` (``.answered_by``,
    ``.answered_at``: who answered first, and when) or ``SessionStateError``; refused
    attempts on a known interrupt are recorded in ``AnswerAttempt``.
    """
    session, actor, status = await sync_to_async(_answer_target)(session_id, interrupt_id, user)
    runner = Runner(get_workflow(session.workflow), store=DjangoEventStore())
    for _ in range(_CONFLICT_RETRIES):
        try:
            if status == InterruptStatus.ANSWERED:
                # Say who was first even when the run has ended since (the engine would only say "completed").
                raise InterruptAlreadyAnswered(interrupt_id)
            await runner.answer(session_id, {interrupt_id: value}, actor=actor)
            break
        except ConcurrencyError:
            continue  # a worker appended meanwhile: validate against the newer log and try again
        except InterruptAlreadyAnswered as refused:
            by, at = await sync_to_async(_first_answer)(session_id, interrupt_id)
            await sync_to_async(_attempt)(
                session_id, interrupt_id, actor, value, AttemptOutcome.ALREADY_ANSWERED, str(refused)
            )
            raise InterruptAlreadyAnswered(
                interrupt_id, by or refused.answered_by, at or refused.answered_at
            ) from None
        except InvalidAnswerError as invalid:
            await sync_to_async(_attempt)(
                session_id, interrupt_id, actor, value, AttemptOutcome.INVALID, str(invalid)
            )
            raise
        except SessionStateError as refused:
            await sync_to_async(_attempt)(
                session_id, interrupt_id, actor, value, AttemptOutcome.REFUSED, str(refused)
            )
            raise
    else:
        raise RunStateError(f"Run {session_id!r} is too busy to take the answer; try again")
    if advance:
        runtime.current().kick(session_id)


# -- cancel and retry -------------------------------------------------------------------------------


async def cancel_run(session_id: str, *, user: Any = None) -> None:
    """Cancel a run for good; a worker executing it elsewhere is fenced off by a new lease."""
    session = await sync_to_async(_session)(session_id)
    if session.status in (RunStatus.COMPLETED, RunStatus.CANCELLED):
        raise RunStateError(f"Run {session_id!r} is {session.status}; it cannot be cancelled")
    actor = actor_name(user)
    if await runtime.current().cancel_local(session_id, actor) is not None:
        return
    ttl = float(settings.WFAPP_LEASE_SECONDS)
    owner = leases.new_owner()
    lease = await sync_to_async(leases.claim)(session_id, owner, ttl, force=True)
    if lease is None:
        raise UnknownRunError(session_id)
    try:
        runner = Runner(get_workflow(session.workflow), store=DjangoEventStore(lease))
        for _ in range(_CONFLICT_RETRIES):
            try:
                await runner.cancel(session_id, actor=actor)
                return
            except ConcurrencyError:
                continue
            except SessionStateError as refused:
                raise RunStateError(str(refused)) from None
        raise RunStateError(f"Run {session_id!r} is too busy to cancel; try again")
    finally:
        await sync_to_async(leases.drop)(lease)


async def check_retry(session_id: str) -> None:
    """Raise unless the run exists and has failed."""
    session = await sync_to_async(_session)(session_id)
    if session.status != RunStatus.FAILED:
        raise RunStateError(f"Run {session_id!r} is {session.status}; only a failed run can be retried")


async def retry_run(session_id: str, *, user: Any = None) -> None:
    """Run the failed nodes of a failed run again, in the background."""
    await check_retry(session_id)
    runtime.current().kick(session_id, retry=True)
