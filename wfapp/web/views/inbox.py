"""The inbox: pending interrupts a user may answer, answered inline, one by one or in bulk."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_POST
from django_htmx.http import reswap, retarget

from engine import limits
from engine.errors import (
    AskingChangedError,
    AskingClosedError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    SessionStateError,
    UnknownInterruptError,
    ValueLimitError,
)
from wfapp.errors import (
    ClaimHeldError,
    NotAssignedError,
    NotPermitted,
    RejectionReasonError,
    RunFailedError,
    RunStateError,
    UnknownRunError,
    UnknownWorkflowError,
)
from wfapp.human import assignment, audit
from wfapp.human.permissions import can_answer
from wfapp.models import AttemptOutcome, Interrupt, InterruptStatus
from wfapp.runs import answering, bulk
from wfapp.schema_forms.values import nearest_key
from wfapp.web import presenter, queries, saved_filters
from wfapp.web.http import is_fragment_request, notice, page_or_fragment, too_large, too_large_message
from wfapp.web.human_steps import INBOX_TABS

VIEW_COOKIE = "wfapp_inbox_view"  # the inbox's view last chosen: "cards" or "list"


def inbox_filters(request: HttpRequest) -> dict[str, Any]:
    tab = request.GET.get("tab", "all")
    sort = request.GET.get("sort", "")
    return {
        "workflow": request.GET.get("workflow", "").replace("\x00", "").strip(),
        "q": request.GET.get("q", "").replace("\x00", "").strip()[:200],
        "newest": sort == "newest",
        "due": sort == "due",
        "by": sort if sort in queries.LIST_SORTS else "",
        "tab": tab if tab in assignment.TABS else "all",
    }


def inbox_view(request: HttpRequest) -> str:
    """The view asked for (``?view=``), else the one last chosen (its cookie), else cards."""
    chosen = request.GET.get("view") or request.COOKIES.get(VIEW_COOKIE, "")
    return chosen if chosen in ("cards", "list") else "cards"


@require_GET
@login_required
def inbox(request: HttpRequest) -> HttpResponse:
    filters = inbox_filters(request)
    watermark = queries.interrupt_watermark()  # first: what comes later, the socket brings
    page = queries.inbox_page(request.user, cursor=request.GET.get("after"), up_to=watermark, **filters)
    filtered = bool(filters["workflow"] or filters["q"] or filters["tab"] != "all")
    context = {
        "asks": presenter.ask_views(page.items, viewer=request.user),
        "page": page,
        "filters": filters,
        "workflows": presenter.workflow_names(),
        "tabs": INBOX_TABS,
        "pending_count": queries.pending_count(request.user) if filtered else page.count,
        "watermark": watermark,
        "saved": partial(saved_filters.listed, request.user, "inbox"),  # read on full pages only
        "rendered_at": timezone.now().isoformat(),
        "can_answer": can_answer(request.user),
        "undo_seconds": settings.WFAPP_UNDO_SECONDS,
        "more": bool(request.GET.get("after")),
        "swap_socket": is_fragment_request(request) and not request.GET.get("after"),
        "view": inbox_view(request),
    }
    fragment = "more" if request.GET.get("after") else "list"
    response = page_or_fragment(request, "wfapp/inbox.html", fragment, context)
    view = inbox_view(request)
    if request.GET.get("view") == view:  # remembered for the next visit
        response.set_cookie(VIEW_COOKIE, view, max_age=365 * 86400, samesite="Lax")
    return response


@require_GET
@login_required
def interrupt_page(request: HttpRequest, pk: int) -> HttpResponse:
    row = queries.visible_interrupt(request.user, pk)
    if row is None:
        raise Http404("No such interrupt")
    if row.status != InterruptStatus.PENDING:
        return render(request, "wfapp/interrupt.html", {"closed": presenter.ClosedView(row), "row": row})
    return render(
        request,
        "wfapp/interrupt.html",
        {"ask": presenter.ask_view(row, allow_bulk=False, viewer=request.user), "row": row},
    )


@require_POST
@login_required
def answer(request: HttpRequest, pk: int) -> HttpResponse:
    row = queries.visible_interrupt(request.user, pk)
    if row is None:
        fields = None if too_large(request) else audit.submitted(request.POST)
        audit.record_forbidden([pk], request.user, fields)  # a question you may not answer stays 404
        raise Http404("No such interrupt")
    target = f"#interrupt-{pk}"
    if too_large(request):
        message = too_large_message(request, "answer")
        audit.record_row(row, request.user, None, AttemptOutcome.TOO_LARGE, message)
        # Keep the form (and what was typed): the message goes on top of it.
        return notice(
            request,
            message,
            status=413,
            target=f"#answer-{target[1:]}",
            swap="afterbegin",
        )
    data, reason = presenter.answer_data(row, request.POST)
    ask = presenter.ask_view(row, data=data, viewer=request.user)
    if not ask.form.is_valid():
        if not ask.form.editing:  # adding or removing a row is not an answer
            audit.record_row(
                row, request.user, audit.submitted(request.POST), AttemptOutcome.INVALID, _errors(ask)
            )
        return _invalid(request, ask)
    try:
        async_to_sync(answering.answer_interrupt)(
            row.session_id,
            row.interrupt_id,
            ask.form.value,
            user=request.user,
            reason=reason,
            asking=audit.asking_of(row, request.POST.get("digest")),
            override_claim=request.POST.get("override_claim") == "1",
        )
    except ClaimHeldError as held:  # someone else holds it: answered only once the override is ticked
        message = f"{held} Tick “Answer over {held.holder}'s claim” to send it."
        return notice(
            request, message, status=409, kind="conflict", target=f"#answer-{target[1:]}", swap="afterbegin"
        )
    except (AskingClosedError, AskingChangedError):  # asked again, withdrawn, or shows something else now
        row.refresh_from_db()
        return notice(
            request,
            f"{audit.stale_reason(row)} Your answer was not recorded.",
            status=409,
            kind="conflict",
            target=f"#answer-{target[1:]}",
            swap="afterbegin",
        )
    except RejectionReasonError as refused:  # a reason without a rejection, or a rejection without its reason
        ask.form.refuse_reason(str(refused))
        return _invalid(request, ask)
    except InvalidAnswerError as invalid:
        for key, messages in invalid.field_errors.items():
            ask.form.errors.setdefault(key, []).extend(messages)
        for widget in ask.form.widgets():
            widget.errors = ask.form.errors.get(widget.key, [])
        return _invalid(request, ask)
    except InterruptAlreadyAnswered:
        return _lost_race(request, row, ask)
    except RunFailedError as refused:  # never a silent retry: the card says so, in place
        message = f"{refused}. Your answer was not recorded."
        return notice(
            request, message, status=409, kind="conflict", target=f"#answer-{target[1:]}", swap="afterbegin"
        )
    except (SessionStateError, RunStateError, UnknownInterruptError):
        message = "This question is no longer open: the run has moved on. Your answer was not recorded."
        return notice(request, message, status=409, kind="conflict", target=target)
    except ValueLimitError as refused:
        if refused.rule == "size":
            message = f"{refused}. Shorten it and send it again."
            return notice(request, message, status=413, target=f"#answer-{target[1:]}", swap="afterbegin")
        return _invalid(request, _with_error(ask, refused))
    except UnknownWorkflowError as gone:
        return notice(request, bulk.workflow_gone(gone), status=410, kind="conflict", target=target)
    except NotAssignedError as refused:  # visible, but someone else's to answer (issue 17)
        return notice(request, str(refused), status=403, target=f"#answer-{target[1:]}", swap="afterbegin")
    except (NotPermitted, UnknownRunError):
        raise Http404("No such interrupt") from None
    if not is_fragment_request(request):
        return redirect(safe_next(request) or "inbox")
    row.refresh_from_db()
    if row.status == InterruptStatus.PENDING:  # a quorum's approval: the card shows who gave one
        card = render(request, "wfapp/inbox.html#item", {"ask": presenter.ask_view(row, viewer=request.user)})
        return reswap(retarget(card, target), "outerHTML")
    response = render(request, "wfapp/inbox.html#closed", {"closed": presenter.ClosedView(row)})
    return reswap(retarget(response, target), "outerHTML")


def _lost_race(request: HttpRequest, row: Interrupt, ask: presenter.AskView) -> HttpResponse:
    """Someone answered first: the card keeps the question and what was typed (read-only), with
    who answered, when and what."""
    row.refresh_from_db()
    closed = presenter.ClosedView(row, draft=ask)
    if not is_fragment_request(request):
        return render(request, "wfapp/interrupt.html", {"closed": closed, "row": row}, status=409)
    response = render(request, "wfapp/inbox.html#closed", {"closed": closed}, status=409)
    return reswap(retarget(response, f"#{closed.dom_id}"), "outerHTML")


def safe_next(request: HttpRequest) -> str | None:
    """The POST's `next=` if it is a URL on this site (never another host or scheme)."""
    url = request.POST.get("next") or ""
    safe = url_has_allowed_host_and_scheme(url, {request.get_host()}, require_https=request.is_secure())
    return url if safe else None


def _errors(ask: presenter.AskView) -> str:
    """A form's field errors on one line, for the audit record of a refused answer."""
    return "; ".join(
        f"{key or '(answer)'}: {', '.join(msgs)}" for key, msgs in ask.form.errors.items() if msgs
    )


def _with_error(ask: presenter.AskView, refused: ValueLimitError) -> presenter.AskView:
    """Show a refusal of the engine's limits on the field it concerns (or on the whole answer)."""
    key = nearest_key(ask.form.root, refused.path)
    ask.form.errors.setdefault(key, []).append(str(refused))
    for widget in ask.form.widgets():
        widget.errors = ask.form.errors.get(widget.key, [])
    return ask


def _invalid(request: HttpRequest, ask: presenter.AskView) -> HttpResponse:
    status = 200 if ask.form.editing else 422  # a row added or removed is not an error
    if is_fragment_request(request):
        return render(request, "wfapp/inbox.html#answer_form", {"ask": ask}, status=status)
    return render(request, "wfapp/interrupt.html", {"ask": ask, "row": ask.row}, status=status)


BULK_LIMIT = 200  # one request answers at most this many, so it stays short
# A tick: the question's id, and the digest of what its card showed (ASCII digits only: str.isdigit()
# and int() take '١٢' and '²').
_TICK = re.compile(r"([0-9]{1,19})(?::([0-9a-f]{64}))?")
MAX_ID = 2**63 - 1  # the largest primary key a database keeps


def bulk_ids(values: list[str]) -> list[tuple[int, str]]:
    """The ticked interrupt ids, each with the digest its card showed ("" when not sent);
    ``ValueError`` naming the first that is not one."""
    ticks = []
    for value in values:
        tick = _TICK.fullmatch(value)
        if tick is None or not 1 <= int(tick[1]) <= MAX_ID:
            shown = value if len(value) <= 30 else value[:29] + "…"
            raise ValueError(
                f"{shown!r} is not an interrupt id: ids are whole numbers from 1 to {MAX_ID}, "
                "written with the digits 0-9. Nothing was answered."
            )
        ticks.append((int(tick[1]), tick[2] or ""))
    return ticks


@require_POST
@login_required
def bulk_answer(request: HttpRequest) -> HttpResponse:
    """Approve or reject every selected interrupt whose schema allows it (a rejection with the
    reason given, when one is); report each."""
    if too_large(request):
        return notice(request, "Too many items at once.", status=413)
    approve = request.POST.get("decision") == "approve"
    try:
        ticked = bulk_ids(request.POST.getlist("ids"))
    except ValueError as bad:
        return notice(request, limits.safe_text(str(bad)), status=400)
    ids = [pk for pk, _ in ticked[:BULK_LIMIT]]
    rows = {row.pk: row for row in queries.answerable(request.user).filter(pk__in=ids)}
    audit.record_forbidden(ids, request.user, {"decision": request.POST.get("decision", "")})
    try:
        results = bulk.answer(
            ids,
            rows,
            approve,
            user=request.user,
            reason=request.POST.get("reason", ""),
            digests=dict(ticked[:BULK_LIMIT]),
        )
    except RejectionReasonError as refused:  # the reason missing, or given with approvals
        return notice(request, str(refused), status=422, target="#bulk-results", swap="innerHTML")
    if len(ticked) > BULK_LIMIT:
        left = len(ticked) - BULK_LIMIT
        text = f"Only the first {BULK_LIMIT} ticked items were answered; {left} more are still pending: send them again."
        results.append(bulk.BulkOutcome(0, False, text))
    status = 200 if any(r.ok for r in results) or not results else 409
    closed = presenter.closed_views([r.row for r in results if r.row])
    context = {"results": results, "approve": approve, "closed_asks": closed}
    return render(request, "wfapp/inbox.html#bulk_results", context, status=status)
