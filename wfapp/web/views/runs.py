"""Runs: the filtered list, the live run page, older events on demand, cancel and retry."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh

from engine import limits
from wfapp import comments, services
from wfapp.errors import NotPermitted, RunStateError, UnknownRunError
from wfapp.models import RunStatus
from wfapp.permissions import can_answer
from wfapp.web import presenter, queries
from wfapp.web.http import is_fragment_request, notice, page_or_fragment


def run_filters(request: HttpRequest) -> dict[str, Any]:
    status = request.GET.get("status", "")
    return {
        "status": status if status in RunStatus.values else "",
        "workflow": request.GET.get("workflow", "").strip(),
        "q": request.GET.get("q", "").strip()[:100],
    }


@require_GET
@login_required
def runs(request: HttpRequest) -> HttpResponse:
    filters = run_filters(request)
    page = queries.runs_page(request.user, cursor=request.GET.get("after"), **filters)
    context = {
        "page": page,
        "filters": filters,
        "statuses": RunStatus.values,
        "workflows": presenter.workflow_names(),
        "pending_count": queries.pending_count(request.user),
        "swap_socket": is_fragment_request(request) and not request.GET.get("after"),
    }
    fragment = "more" if request.GET.get("after") else "list"
    return page_or_fragment(request, "wfapp/runs.html", fragment, context)


def _run(request: HttpRequest, session_id: str) -> Any:
    session = queries.get_run(request.user, session_id)
    if session is None:
        raise Http404("No such run")
    return session


@require_GET
@login_required
def run(request: HttpRequest, session_id: str) -> HttpResponse:
    expanded = presenter.expanded_nodes(request.GET.getlist("expand"))  # "+N more" without JavaScript
    context = presenter.run_context(_run(request, session_id), request.user, expanded)
    context["pending_count"] = queries.pending_count(request.user)
    context["can_comment"] = can_answer(request.user, context["run"].workflow)
    return render(request, "wfapp/run.html", context)


@require_GET
@login_required
def run_events(request: HttpRequest, session_id: str) -> HttpResponse:
    """Older timeline entries, before seq `before`, replacing the "load older" button."""
    session = _run(request, session_id)
    try:
        before = int(request.GET.get("before", ""))
    except ValueError:
        raise Http404("No such page") from None
    rows = queries.events_before(session.pk, before)
    context = {
        "run": session,
        "entries": presenter.entries(rows),
        "older_before": rows[0]["seq"] if rows and rows[0]["seq"] > 1 else None,
    }
    return render(request, "wfapp/run.html#older", context)


def _action(request: HttpRequest, session_id: str, action: Any) -> HttpResponse:
    session = _run(request, session_id)
    try:
        async_to_sync(action)(session.pk, user=request.user)
    except NotPermitted as refused:
        return notice(request, f"{refused}: ask an administrator for the permission.", status=403)
    except RunStateError as refused:
        return notice(request, str(refused), status=409, kind="conflict")
    except UnknownRunError:
        raise Http404("No such run") from None
    if is_fragment_request(request):
        return HttpResponseClientRefresh()
    return redirect("run", session_id=session.pk)


@require_POST
@login_required
def comment(request: HttpRequest, session_id: str) -> HttpResponse:
    """A comment on the run, or on one of its questions (``question``: its id)."""
    session = _run(request, session_id)
    question = request.POST.get("question", "")
    try:
        pk = int(question) if question else None
        async_to_sync(comments.add_comment)(
            session.pk, request.POST.get("text"), user=request.user, interrupt_pk=pk
        )
    except NotPermitted as refused:
        return notice(request, f"{refused}: ask an administrator for the permission.", status=403)
    except UnknownRunError:
        raise Http404("No such run") from None
    except ValueError as refused:
        return notice(request, limits.safe_text(str(refused)), status=400)
    if is_fragment_request(request):
        return HttpResponseClientRefresh()
    return redirect("run", session_id=session.pk)


@require_POST
@login_required
def cancel(request: HttpRequest, session_id: str) -> HttpResponse:
    return _action(request, session_id, services.cancel_run)


@require_POST
@login_required
def retry(request: HttpRequest, session_id: str) -> HttpResponse:
    return _action(request, session_id, services.retry_run)
