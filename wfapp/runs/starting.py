"""Start a run: check the input and the user's permission, record the run, have it executed.

Like every action here, it checks everything first and raises a ``ValueError`` subclass (from
``wfapp.errors`` or ``engine.errors``) without writing anything when the request is bad; given a
``user`` it enforces that user's permission (``NotPermitted``), ``user=None`` being the trusted
system (the CLI without ``--user``). Execution happens in the background (``wfapp.runs.dispatch``).
"""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from engine.limits import check_input
from wfapp.errors import (
    InputValidationError,
)
from wfapp.human.permissions import (
    check_start,
)
from wfapp.models import Session
from wfapp.registry import get_workflow
from wfapp.run_labels import summary_of
from wfapp.runs import dispatch
from wfapp.runs.inputs import schema_errors
from wfapp.store import doorbell
from wfapp.store.lease import Lease


def _check_start(user: Any, workflow: str) -> None:
    if user is not None:  # None: the trusted system
        check_start(user, workflow)


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
            summary=summary_of(workflow.name, workflow.version, node_input),
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
    errors = schema_errors(wf.input_json_schema, node_input)
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
