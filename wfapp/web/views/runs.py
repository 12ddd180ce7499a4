"""Runs: the filtered list, the live run page, older events on demand, cancel and retry."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh

from wfapp import services
from wfapp.errors import NotPermitted, RunStateError, UnknownRunError
from wfapp.models import RunStatus
from wfapp.web import presenter, queries, run_search
from wfapp.web.http import is_fragment_request, notice, page_or_fragment
from wfapp.web.run_search import BadSearch, RunSearch


@require_GET
@login_required
def runs(request: HttpRequest) -> HttpResponse:
    """Runs, filtered by the GET parameters (`run_search`); bad ones are listed, no runs shown."""
    problems: list[str] = []
    try:
        search = run_search.parse(request.GET)
        page = queries.runs_page(search, cursor=request.GET.get("after"))
    except BadSearch as bad:
        search, problems = _as_typed(request), bad.problems
        page = queries.Page([], None)
    context = {
        "page": page,
        "filters": search,
        "problems": problems,
        "text_scope": run_search.TEXT_SCOPE,
        "statuses": RunStatus.values,
        "workflows": presenter.workflow_names(),
        "pending_count": queries.pending_count(request.user),
        "swap_socket": is_fragment_request(request) and not request.GET.get("after"),
    }
    fragment = "more" if request.GET.get("after") else "list"
    status = 422 if problems else 200  # 422: htmx swaps it, so the messages show
    return page_or_fragment(request, "wfapp/runs.html", fragment, context, status=status)


def _as_typed(request: HttpRequest) -> RunSearch:
    """The filters as typed (shown again in the form beside what is wrong with them)."""
    names = RunSearch.__dataclass_fields__
    return RunSearch(**{k: request.GET.get(k, "").replace("\x00", "")[:300] for k in names})


def _run(session_id: str) -> Any:
    session = queries.get_run(session_id)
    if session is None:
        raise Http404("No such run")
    return session


@require_GET
@login_required
def run(request: HttpRequest, session_id: str) -> HttpResponse:
    expanded = presenter.expanded_nodes(request.GET.getlist("expand"))  # "+N more" without JavaScript
    context = presenter.run_context(_run(session_id), request.user, expanded)
    context["pending_count"] = queries.pending_count(request.user)
    return render(request, "wfapp/run.html", context)


@require_GET
@login_required
def run_events(request: HttpRequest, session_id: str) -> HttpResponse:
    """Older timeline entries, before seq `before`, replacing the "load older" button."""
    session = _run(session_id)
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
    session = _run(session_id)
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
def cancel(request: HttpRequest, session_id: str) -> HttpResponse:
    return _action(request, session_id, services.cancel_run)


@require_POST
@login_required
def retry(request: HttpRequest, session_id: str) -> HttpResponse:
    return _action(request, session_id, services.retry_run)
