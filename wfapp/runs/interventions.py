"""An operator steps in: cancel a run for good, or retry a failed one (its failed node again,
optionally with an edited input), each recorded in the log with who did it and why.

Given a ``user``, each action enforces that user's permission (``NotPermitted``); ``user=None`` is
the trusted system. Nothing is written when a request is refused.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from engine import Runner
from engine.errors import (
    ConcurrencyError,
    InvalidInputError,
    SessionStateError,
)
from engine.limits import check_input
from engine.runner import check_reason
from wfapp.errors import (
    HumanInputError,
    InputValidationError,
    NotPermitted,
    RunStateError,
    UnknownRunError,
)
from wfapp.human.audit import actor_name
from wfapp.human.permissions import (
    can_cancel,
    can_retry,
    can_view,
    edit_refusal,
    require,
)
from wfapp.models import RunStatus, Session
from wfapp.registry import get_workflow
from wfapp.runs import dispatch, failures, runtime
from wfapp.runs.answering import CONFLICT_RETRIES
from wfapp.runs.inputs import schema_errors
from wfapp.store import lease as leases
from wfapp.store.cache import FOLDED
from wfapp.store.events import DjangoEventStore
from wfapp.store.rows import session_row


def permitted_session(session_id: str, user: Any, allowed: Any, action: str) -> Session:
    """The run, once ``user`` (unless None, the trusted system) passes ``allowed(user, session)``;
    a run ``user`` may not view is unknown to them."""
    session = session_row(session_id)
    if user is not None:
        if not can_view(user, session.workflow):
            raise UnknownRunError(session_id)
        require(allowed(user, session), user, action)
    return session


async def cancel_run(session_id: str, *, user: Any = None, reason: str = "") -> None:
    """Cancel a run for good, recording who did and ``reason`` (optional); a worker executing
    it elsewhere is fenced off by a new lease. A reason the log cannot keep (over
    ``engine.runner.MAX_REASON_CHARS``, a NUL) raises ``ValueLimitError`` and changes nothing."""
    reason = reason.strip()
    if reason:
        check_reason(reason)
    session = await sync_to_async(permitted_session)(session_id, user, can_cancel, "cancel runs")
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
        for _ in range(CONFLICT_RETRIES):
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
    session = await sync_to_async(permitted_session)(session_id, user, can_retry, "retry runs")
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
    ``NotPermitted`` (an edited input needs ``wfapp.retry_with_edited_input`` and is never the
    run's requester's), ``UnknownRunError``, ``RunStateError`` (not failed), ``HumanInputError``
    (the node's input comes from a human step: editing it would replace people's decision),
    ``engine.errors.NotFailedNodeError``, ``InputValidationError`` (``field_errors``) or
    ``ValueLimitError`` (an input or a reason the log cannot keep); nothing is written then.
    """
    reason = reason.strip()
    if reason:
        check_reason(reason)
    session = await check_retry(session_id, user=user)
    workflow = get_workflow(session.workflow, session.version or None)
    if edited:
        if user is not None:
            refusal = await sync_to_async(edit_refusal)(user, session)
            if refusal is not None:
                raise NotPermitted(refusal)
        if node is None:
            raise InputValidationError(
                session.workflow, {"": ["An edited input needs the failed node it is for"]}
            )
        step = await sync_to_async(failures.human_step_feeding)(session_id, workflow, node)
        if step is not None:
            raise HumanInputError(node, step)
        check_input(node_input, "The edited input")
        errors = schema_errors(failures.input_schema(workflow, node), node_input)
        if errors:
            raise InputValidationError(session.workflow, errors)
    runner = Runner(workflow, store=DjangoEventStore(), folded=FOLDED)
    for _ in range(CONFLICT_RETRIES):
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
