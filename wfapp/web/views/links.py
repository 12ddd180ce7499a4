"""Signed answer links (``wfapp.runs.answer_links``): GET shows the question, POST answers it; no login."""

from __future__ import annotations

from asgiref.sync import async_to_sync
from django.contrib.auth.decorators import login_not_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from engine.errors import (
    AskingChangedError,
    AskingClosedError,
    InterruptAlreadyAnswered,
    InvalidAnswerError,
    ValueLimitError,
)
from wfapp.errors import NotPermitted, RejectionReasonError, UnknownRunError
from wfapp.human import audit
from wfapp.runs import answer_links
from wfapp.web import presenter

TEMPLATE = "wfapp/answer_link.html"


def _refused(request: HttpRequest, reason: str) -> HttpResponse:
    return render(request, TEMPLATE, {"refused": reason}, status=410)


@login_not_required  # the signed link stands in for the login
@never_cache  # "no-store": no cache keeps the page (and its form) the link opened
@require_http_methods(["GET", "POST"])
def answer_link(request: HttpRequest, token: str) -> HttpResponse:
    if not answer_links.enabled():
        raise Http404("Answer links are off")
    try:
        link = answer_links.open_link(token)
    except answer_links.LinkRefused as refused:
        return _refused(request, str(refused))
    posted = request.method == "POST"
    data, reason = presenter.answer_data(link.interrupt, request.POST) if posted else (None, None)
    ask = presenter.ask_view(link.interrupt, data=data, allow_bulk=False, viewer=link.recipient)
    ask.post_url = request.path
    context = {"ask": ask, "row": link.interrupt, "recipient": link.recipient}
    if not posted:
        return render(request, TEMPLATE, context)  # showing never answers: a preview bot only GETs
    if not ask.form.is_valid():
        return render(request, TEMPLATE, context, status=200 if ask.form.editing else 422)
    try:
        async_to_sync(answer_links.answer)(token, ask.form.value, reason, request.POST.get("digest"))
    except answer_links.LinkRefused as refused:
        return _refused(request, str(refused))
    except RejectionReasonError as refused:
        ask.form.refuse_reason(str(refused))
        return render(request, TEMPLATE, context, status=422)
    except (InvalidAnswerError, ValueLimitError) as invalid:
        ask.form.errors.setdefault("", []).append(str(invalid))
        return render(request, TEMPLATE, context, status=422)
    except (AskingClosedError, AskingChangedError):
        link.interrupt.refresh_from_db()
        return _refused(request, f"{audit.stale_reason(link.interrupt)} Your answer was not recorded.")
    except InterruptAlreadyAnswered as first:
        return _refused(
            request, f"This question was already answered by {first.answered_by or 'someone else'}."
        )
    except (NotPermitted, UnknownRunError):
        return _refused(request, f"{link.recipient.get_username()} may no longer answer this question.")
    except ValueError as refused:  # the run moved on, or its workflow is gone
        return _refused(request, f"This question is no longer open: {refused}")
    return render(request, TEMPLATE, {**context, "answered": True})
