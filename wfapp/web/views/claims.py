"""Claim, unclaim and reassign a question from its inbox card (``wfapp.human.claims`` decides)."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from engine.errors import CallerError
from wfapp.errors import BadRequest, NotPermitted
from wfapp.human import claims
from wfapp.web import presenter, queries
from wfapp.web.http import is_fragment_request, notice
from wfapp.web.views.inbox import safe_next


def _decide(request: HttpRequest, pk: int, decision: str, users: list[str] | None = None) -> HttpResponse:
    row = queries.visible_interrupt(request.user, pk)
    if row is None:
        raise Http404("No such interrupt")
    target = f"#interrupt-{pk}"
    try:
        async_to_sync(claims.decide_interrupt)(
            row.session_id,
            row.interrupt_id,
            decision,
            user=request.user,
            users=users,
            request_seq=row.request_seq,
        )
    except NotPermitted as refused:
        return notice(request, str(refused), status=403, target=target, swap="afterbegin")
    except (BadRequest, CallerError) as refused:  # claimed meanwhile, closed, an unknown name
        return notice(request, str(refused), status=409, kind="conflict", target=target, swap="afterbegin")
    if not is_fragment_request(request):
        return redirect(safe_next(request) or "inbox")
    row.refresh_from_db()
    return render(request, "wfapp/inbox.html#item", {"ask": presenter.ask_view(row, viewer=request.user)})


@require_POST
@login_required
def claim(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(request, pk, "claim")


@require_POST
@login_required
def unclaim(request: HttpRequest, pk: int) -> HttpResponse:
    return _decide(request, pk, "unclaim")


@require_POST
@login_required
def reassign(request: HttpRequest, pk: int) -> HttpResponse:
    names = [name.strip() for name in request.POST.get("to", "").split(",") if name.strip()]
    return _decide(request, pk, "reassign", names)
