"""Registered workflows: a picture of each graph, and a start form from its input schema."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRedirect

from engine.errors import ValueLimitError
from wfapp.errors import InputValidationError, NotPermitted, UnknownWorkflowError
from wfapp.human.permissions import can_check_replays, can_start, check_start
from wfapp.registry import all_workflows
from wfapp.runs import starting, versions
from wfapp.schema_forms.form import SchemaForm
from wfapp.web import queries, who_answers
from wfapp.web.graph.svg import render_graph
from wfapp.web.http import is_fragment_request, notice, too_large, too_large_message


def _card(workflow: Any, user: Any, data: Any = None) -> dict[str, Any]:
    describe = workflow.describe()
    return {
        "name": workflow.name,
        "can_start": can_start(user, workflow.name),
        "description": describe.get("description") or "",
        "graph": mark_safe(render_graph(describe, id_prefix=f"graph-{workflow.name}")),
        "form": SchemaForm(
            workflow.input_json_schema, data=data, id_prefix=f"start-{workflow.name}-", root_label="Input"
        ),
        "start_url": reverse("workflow-start", args=[workflow.name]),
        "url": reverse("workflow", args=[workflow.name]),
        "nodes": len(describe.get("nodes") or []),
        "version": workflow.version,
    }


def _workflow(name: str) -> Any:
    workflow = all_workflows().get(name)
    if workflow is None:
        raise Http404("No such workflow")
    return workflow


@require_GET
@login_required
def workflows(request: HttpRequest) -> HttpResponse:
    cards = [_card(wf, request.user) for wf in all_workflows().values()]
    context = {"cards": cards, "pending_count": queries.pending_count(request.user)}
    return render(request, "wfapp/workflows.html", context)


# Open runs whose replay check the workflow page shows (the newest first); the CLI checks all.
CHECKED_RUNS = 50


@require_GET
@login_required
def workflow(request: HttpRequest, name: str) -> HttpResponse:
    """One workflow; its open runs counted and checked only as far as the viewer may see them,
    and their replay checks only for those who may retry them."""
    may_check = can_check_replays(request.user, name)
    context = {
        "card": _card(_workflow(name), request.user),
        "pending_count": queries.pending_count(request.user),
        "versions": versions.open_counts(name, viewer=request.user),
        "may_check": may_check,
        "checks": versions.check_runs(name, limit=CHECKED_RUNS, viewer=request.user) if may_check else [],
        "checked_limit": CHECKED_RUNS,
        "asking_steps": who_answers.asking_steps(name),
        "rules": who_answers.rules(name),
    }
    return render(request, "wfapp/workflow.html", context)


@require_POST
@login_required
def start(request: HttpRequest, name: str) -> HttpResponse:
    workflow = _workflow(name)
    try:
        check_start(request.user, workflow.name)  # before the form: its errors are no one else's business
    except NotPermitted as refused:
        return _not_permitted(request, refused)
    if too_large(request):
        return notice(
            request, too_large_message(request, "input"), status=413, target="#start-form", swap="afterbegin"
        )
    card = _card(workflow, request.user, data=request.POST)
    form: SchemaForm = card["form"]
    if form.is_valid():
        try:
            run_id = async_to_sync(starting.start_run)(name, form.value, user=request.user)
        except InputValidationError as invalid:
            form.add_errors(invalid.field_errors)
        except ValueLimitError as refused:  # the form's own checks let nothing like this through
            form.add_error_at(refused.path, str(refused))
        except UnknownWorkflowError:
            raise Http404("No such workflow") from None
        except NotPermitted as refused:
            return _not_permitted(request, refused)
        else:
            url = reverse("run", args=[run_id])
            return HttpResponseClientRedirect(url) if is_fragment_request(request) else redirect(url)
    status = 200 if form.editing else 422  # a row added or removed is not an error
    if is_fragment_request(request):
        return render(request, "wfapp/workflow.html#start_form", {"card": card}, status=status)
    context = {"card": card, "pending_count": queries.pending_count(request.user)}
    return render(request, "wfapp/workflow.html", context, status=status)


def _not_permitted(request: HttpRequest, refused: NotPermitted) -> HttpResponse:
    message = f"{refused}: ask an administrator for the permission."
    return notice(request, message, status=403, target="#start-form", swap="afterbegin")
