"""Saved filters on the inbox and the runs list: save the shown filters under a name, delete."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from wfapp.web import saved_filters
from wfapp.web.http import is_fragment_request


def _block(request: HttpRequest, page: str, *, error: str = "", status: int = 200) -> HttpResponse:
    context = {"saved": saved_filters.listed(request.user, page), "saved_page": page, "saved_error": error}
    return render(request, "wfapp/saved_filters.html", context, status=status)


def _back(page: str, query: str = "") -> HttpResponse:
    url = reverse("inbox" if page == "inbox" else "runs")
    return redirect(f"{url}?{query}" if query else url)


@require_POST
@login_required
def save(request: HttpRequest) -> HttpResponse:
    page = request.POST.get("page", "")
    try:
        saved = saved_filters.save(request.user, page, request.POST.get("name", ""), request.POST)
    except saved_filters.BadFilter as bad:
        if page not in saved_filters.PAGES:
            raise Http404(str(bad)) from None
        return _block(request, page, error=str(bad), status=422)
    if is_fragment_request(request):
        return _block(request, page)
    return _back(page, saved.query)


@require_POST
@login_required
def delete(request: HttpRequest, pk: int) -> HttpResponse:
    page = saved_filters.delete(request.user, pk)
    if page is None:
        raise Http404("No such saved filter")
    if is_fragment_request(request):
        return _block(request, page)
    return _back(page)
