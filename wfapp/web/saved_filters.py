"""Saved filters: a user's named queries for the inbox and the runs list, checked before saving."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlencode

from django.db import IntegrityError, transaction

from wfapp.models import SavedFilter
from wfapp.web import run_search
from wfapp.web.human_steps import INBOX_TABS

PAGES = dict(SavedFilter.PAGES)
PER_PAGE = 30  # saved filters a user keeps per page
INBOX_KEYS = ("workflow", "q", "sort", "tab")  # the tab and the sort are kept too (issue 27)
TABS = {value for value, _ in INBOX_TABS if value != "all"}
SORT = re.compile(r"[a-z][a-z_-]{0,29}")  # a sort the inbox names (it falls back on one it does not know)


class BadFilter(ValueError):
    """A filter that cannot be saved; the message says why. Nothing was saved."""


def listed(user: Any, page: str) -> list[SavedFilter]:
    return list(SavedFilter.objects.filter(user=user, page=page).order_by("name", "pk"))


def query_of(page: str, params: Mapping[str, Any]) -> str:
    """The page's filters in `params` as the query to save (checked as the page checks them)."""
    if page == "runs":
        try:
            return run_search.parse(params).query()
        except run_search.BadSearch as bad:
            raise BadFilter(f"These filters cannot be saved: {bad}") from None
    values = {k: str(params.get(k) or "").replace("\x00", "").strip()[:200] for k in INBOX_KEYS}
    if values["sort"] == "oldest" or not SORT.fullmatch(values["sort"]):
        values["sort"] = ""  # oldest first: the default
    if values["tab"] not in TABS:
        values["tab"] = ""
    return urlencode({k: v for k, v in values.items() if v})


def save(user: Any, page: str, name: str, params: Mapping[str, Any]) -> SavedFilter:
    """Save (or replace) `user`'s filter `name` for `page` with the filters in `params`."""
    if page not in PAGES:
        raise BadFilter(f"Filters are saved for the inbox or the runs list, not {page[:30]!r}.")
    name = name.replace("\x00", "").strip()
    if not name:
        raise BadFilter("Give the filter a name.")
    if len(name) > 80:
        raise BadFilter("The name is longer than 80 characters.")
    query = query_of(page, params)
    if not query:
        raise BadFilter("Choose some filters first: these show everything.")
    existing = SavedFilter.objects.filter(user=user, page=page)
    if not existing.filter(name=name).exists() and existing.count() >= PER_PAGE:
        raise BadFilter(f"You have {PER_PAGE} saved filters here: delete one first.")
    try:
        with transaction.atomic():
            saved, _ = SavedFilter.objects.update_or_create(
                user=user, page=page, name=name, defaults={"query": query}
            )
    except IntegrityError:  # saved at the same moment elsewhere: the other one stands
        raise BadFilter(f"A filter named {name!r} was just saved: try again.") from None
    return saved


def delete(user: Any, pk: int) -> str | None:
    """Delete `user`'s saved filter `pk`; its page, or None when there is no such filter of theirs."""
    row = SavedFilter.objects.filter(user=user, pk=pk).first()
    if row is None:
        return None
    row.delete()
    return row.page
