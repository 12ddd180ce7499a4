"""Runs: the filtered list, the live run page (with its state as of an event, or the changes
between two), older events on demand, cancel (with a reason) and retry (the run, one failed
node, or one failed node with an edited input)."""

from __future__ import annotations

from functools import partial
from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import HttpResponseClientRefresh, push_url

from engine import limits
from engine.errors import NotFailedNodeError, ValueLimitError
from engine.runner import check_reason
from wfapp.errors import InputValidationError, NotPermitted, RunStateError, UnknownRunError
from wfapp.human import comments, permissions
from wfapp.human.permissions import can_answer
from wfapp.models import RunStatus
from wfapp.runs import interventions
from wfapp.web import presenter, queries, run_search, saved_filters, state_diff
from wfapp.web.failure_cards import failure_cards, retry_edited
from wfapp.web.http import is_fragment_request, notice, page_or_fragment, too_large, too_large_message
from wfapp.web.run_search import BadSearch, RunSearch


@require_GET
@login_required
def runs(request: HttpRequest) -> HttpResponse:
    """Runs, filtered by the GET parameters (`run_search`); bad ones are listed, no runs shown."""
    problems: list[str] = []
    rendered_at = timezone.now()  # first: runs started later, the socket brings
    try:
        search = run_search.parse(request.GET)
        page = queries.runs_page(request.user, search, cursor=request.GET.get("after"))
        presenter.with_actors(page.items)
    except BadSearch as bad:
        search, problems = _as_typed(request), bad.problems
        page = queries.Page([], None)
    context = {
        "page": page,
        "filters": search,
        "problems": problems,
        "saved": partial(saved_filters.listed, request.user, "runs"),  # read on full pages only
        "statuses": RunStatus.values,
        "workflows": presenter.workflow_names(),
        "pending_count": queries.pending_count(request.user),
        "failed_deliveries": queries.failed_deliveries(request.user),
        "swap_socket": is_fragment_request(request) and not request.GET.get("after"),
        "rendered_at": rendered_at.isoformat(),
    }
    fragment = "more" if request.GET.get("after") else "list"
    status = 422 if problems else 200  # 422: htmx swaps it, so the messages show
    return page_or_fragment(request, "wfapp/runs.html", fragment, context, status=status)


def _as_typed(request: HttpRequest) -> RunSearch:
    """The filters as typed (shown again in the form beside what is wrong with them)."""
    names = RunSearch.__dataclass_fields__
    return RunSearch(**{k: request.GET.get(k, "").replace("\x00", "")[:300] for k in names})


def _run(request: HttpRequest, session_id: str) -> Any:
    session = queries.get_run(request.user, session_id)
    if session is None:
        raise Http404("No such run")
    return session


def _page(request: HttpRequest, session: Any, status: int = 200, **parts: Any) -> HttpResponse:
    expanded = presenter.expanded_nodes(request.GET.getlist("expand"))  # "+N more" without JavaScript
    context = presenter.run_context(session, request.user, expanded, **parts)
    context["pending_count"] = queries.pending_count(request.user)
    context["can_comment"] = can_answer(request.user, context["run"].workflow)
    return render(request, "wfapp/run.html", context, status=status)


@require_GET
@login_required
def run(request: HttpRequest, session_id: str) -> HttpResponse:
    """The run page; `?at=SEQ` shows the state as of that event, `&from=SEQ` the changes since
    another (a selection that does not exist: 422, saying why)."""
    panel_only = is_fragment_request(request) and request.headers.get("HX-Target") == "run-compare"
    latest = (
        None if panel_only else queries.events_before(session_id, None)
    )  # before the row: see run_context
    session = _run(request, session_id)
    compare = state_diff.compare(session.pk, session.last_seq, request.GET.get("at"), request.GET.get("from"))
    status = 422 if compare.error else 200
    if panel_only:
        context = {"run": session, "compare": compare}
        response = render(request, "wfapp/run.html#compare", context, status=status)
        if not compare.error:  # the address bar says what is selected: a URL to share
            query = f"?{compare.query}" if compare.query else ""
            push_url(response, reverse("run", args=[session.pk]) + query)
        return response
    return _page(request, session, status, compare=compare, latest=latest)


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
        "entries": presenter.entries(rows, session),
        "older_before": rows[0]["seq"] if rows and rows[0]["seq"] > 1 else None,
    }
    return render(request, "wfapp/run.html#older", context)


def _action(request: HttpRequest, session_id: str, action: Any, **options: Any) -> HttpResponse:
    session = _run(request, session_id)
    try:
        async_to_sync(action)(session.pk, user=request.user, **options)
    except NotPermitted as refused:
        return notice(request, f"{refused}: ask an administrator for the permission.", status=403)
    except (RunStateError, NotFailedNodeError) as refused:
        return notice(request, str(refused), status=409, kind="conflict")
    except (ValueLimitError, InputValidationError) as refused:
        return notice(request, str(refused), status=422)
    except UnknownRunError:
        raise Http404("No such run") from None
    return _done(request, session.pk)


def _done(request: HttpRequest, session_id: str) -> HttpResponse:
    if is_fragment_request(request):
        return HttpResponseClientRefresh()
    return redirect("run", session_id=session_id)


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
    return _action(request, session_id, interventions.cancel_run, reason=request.POST.get("reason", ""))


@require_POST
@login_required
def retry(request: HttpRequest, session_id: str) -> HttpResponse:
    """Retry the failed run, or the failed node `node`; `?edit=1` with that node's edited input;
    `reason` (optional) is kept with the retry."""
    node = request.POST.get("node") or request.GET.get("node") or None
    reason = request.POST.get("reason", "")
    if request.GET.get("edit") != "1":
        return _action(request, session_id, interventions.retry_run, node=node, reason=reason)
    session = _run(request, session_id)
    if node is None:
        return notice(request, "An edited input needs the failed node it is for (node=...)", status=422)
    try:
        check_reason(reason.strip())
    except ValueLimitError as refused:  # before the form: it would show on the input's fields
        return notice(request, str(refused), status=422)
    if too_large(request):
        return notice(request, too_large_message(request, "input"), status=413)
    refusal = permissions.edit_refusal(request.user, session)
    if refusal is not None:  # before the form: its errors are no one else's business
        return notice(request, f"{refusal}.", status=403)
    card = next((c for c in failure_cards(session, (node, request.POST)) if c.node.path == node), None)
    if card is None or card.form is None:
        return notice(request, f"Node {node!r} is not a failed node of this run", status=409, kind="conflict")
    form = card.form
    if form.is_valid():
        try:
            if retry_edited(session.pk, request.user, node, form, reason):
                return _done(request, session.pk)
        except NotPermitted as refused:
            return notice(request, f"{refused}: ask an administrator for the permission.", status=403)
        except (RunStateError, NotFailedNodeError) as refused:
            return notice(request, str(refused), status=409, kind="conflict")
    status = 200 if form.editing else 422  # a row added or removed is not an error
    if is_fragment_request(request):
        context = {"card": card, "run": session, "reason": reason}
        return render(request, "wfapp/run.html#retry_form", context, status=status)
    cards = [card if c.node.path == node else c for c in failure_cards(session)]
    return _page(request, session, status, failures=cards)
