"""The run page's failures: each node that failed, its attempts, and the forms that retry it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from django.urls import reverse
from django.utils.http import urlencode

from engine.errors import ValueLimitError
from wfapp.errors import InputValidationError
from wfapp.human.permissions import edit_refusal
from wfapp.models import Session
from wfapp.registry import drawable_workflow
from wfapp.runs import failures, interventions
from wfapp.schema_forms.form import MISSING, SchemaForm
from wfapp.schema_forms.values import FormData


@dataclass
class FailureCard:
    """One failed node as the run page shows it; ``form`` edits its input for a retry."""

    number: int
    node: failures.NodeFailures
    form: SchemaForm | None
    start_input: bool  # the node takes the run's start input: editing it edits that
    retry_url: str
    edit_refused: str = (
        ""  # why the viewer is offered no edited input (wfapp.human.permissions, a human step)
    )

    @property
    def dom_id(self) -> str:
        return f"failure-{self.number}"

    @property
    def edit_url(self) -> str:
        return f"{self.retry_url}?{urlencode({'node': self.node.path, 'edit': '1'})}"


def edit_form(
    session: Session, node: failures.NodeFailures, number: int, data: FormData | None = None
) -> SchemaForm:
    """The form editing the input of failed ``node`` (filled with the input it failed on)."""
    workflow = drawable_workflow(session.workflow, session.version)
    schema = failures.input_schema(workflow, node.path) if workflow is not None else None
    initial: Any = MISSING
    if node.has_input:
        initial = node.last_input
    elif workflow is not None and failures.takes_start_input(workflow, node.path):
        initial = session.input
    return SchemaForm(schema, data=data, initial=initial, id_prefix=f"retry-{number}-", root_label="Input")


def failure_cards(
    session: Session,
    bound: tuple[str, FormData] | None = None,
    nodes: list[failures.NodeFailures] | None = None,
    viewer: Any = None,
) -> list[FailureCard]:
    """The run's failed nodes, oldest failure first; ``bound``: (node path, the form data posted).
    With ``viewer``, each card says why that person is offered no edited input, if they are not."""
    workflow = drawable_workflow(session.workflow, session.version)
    retry_url = reverse("run-retry", args=[session.pk])
    refusal = edit_refusal(viewer, session) if viewer is not None else None
    cards = []
    for number, node in enumerate(failures.node_failures(session.pk) if nodes is None else nodes, start=1):
        form = None
        refused = ""
        if node.failed and session.status == "failed":
            data = bound[1] if bound is not None and bound[0] == node.path else None
            form = edit_form(session, node, number, data)
            if viewer is not None:
                refused = refusal or _human_fed(session, workflow, node.path)
        start = workflow is not None and failures.takes_start_input(workflow, node.path)
        cards.append(FailureCard(number, node, form, start, retry_url, refused))
    return cards


def _human_fed(session: Session, workflow: Any, path: str) -> str:
    step = failures.human_step_feeding(session.pk, workflow, path) if workflow is not None else None
    return (
        f"its input comes from the human step {step}: retry it unedited, or ask the step again"
        if step
        else ""
    )


def retry_edited(session_id: str, user: Any, node: str, form: SchemaForm, reason: str = "") -> bool:
    """Retry failed ``node`` with the valid ``form``'s value as its input (and the optional
    ``reason``); False, with the errors shown on the form, when the service refuses that input
    or the reason (nothing is written then).
    ``NotPermitted``, ``RunStateError`` and ``NotFailedNodeError`` are raised as they come."""
    try:
        async_to_sync(interventions.retry_run)(
            session_id, user=user, node=node, node_input=form.value, edited=True, reason=reason
        )
    except InputValidationError as invalid:
        form.add_errors(invalid.field_errors)
        return False
    except ValueLimitError as refused:
        form.add_error_at(refused.path, str(refused))
        return False
    return True
