"""Pending counts shared by every live page that hears the same doorbell.

One doorbell reaches every open inbox, run page and runs list; each wants the same "N pending"
number. Counting once per doorbell (and per filter) instead of once per socket keeps an event's
cost flat however many pages are open. A doorbell is identified by its `(session_id, seq)`:
each commit rings with a new one, so a cached count never outlives the state it counted. Entries
also expire after `TTL` seconds, in case a status change rings again with the same seq.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable

from wfapp.human.permissions import answer_scope
from wfapp.web import queries
from wfapp.web import shared as shared_values
from wfapp.web.shared import shared

TTL = 2.0

Doorbell = tuple[str, int]

# How long a user's answer scope (the key their counts are shared under) is kept: rights change
# rarely, and the live pages' access checks keep theirs as long (``live.access.RIGHT_FRESH``).
SCOPE_TTL = 5.0


def _shared(key: Hashable, compute: Callable[[], int]) -> int:
    return shared(("count", key), compute, TTL)


def shared_text(key: Hashable, compute: Callable[[], str]) -> str:
    """A text that depends only on ``key`` (a badge for a count), rendered once for every page."""
    return shared(("text", key), compute, TTL)


def scope(user: object) -> Hashable | None:
    """The user's answer scope (``answer_scope``: None when they may answer nothing), kept per
    user for ``SCOPE_TTL`` seconds: users with the same scope see the same questions, so what is
    rendered of them can be shared."""
    return _scope(user)


def known_scope(user: object) -> tuple[bool, Hashable | None]:
    """``(True, scope)`` when the user's scope is kept still, else ``(False, None)`` (no query)."""
    return shared_values.peek(("scope", getattr(user, "pk", None)), SCOPE_TTL)


def known_pending_count(user: object, doorbell: Doorbell) -> int | None:
    """The pending count shared for this doorbell and the user's scope, if someone counted it
    already (None: not yet; no query)."""
    found, scope = known_scope(user)
    if not found or scope is None:
        return None
    hit, value = shared_values.peek(("count", (doorbell, scope, "", "")), TTL)
    return value if hit else None


def known_text(key: Hashable) -> str | None:
    """A ``shared_text`` already rendered (None: not yet)."""
    hit, value = shared_values.peek(("text", key), TTL)
    return value if hit else None


def _scope(user: object) -> Hashable:
    """The user's answer scope, kept per user (every socket of theirs) for ``SCOPE_TTL`` seconds."""
    pk = getattr(user, "pk", None)
    if pk is None:
        return answer_scope(user)
    return shared(("scope", pk), lambda: answer_scope(user), SCOPE_TTL)


def pending_count(user: object, doorbell: Doorbell | None = None) -> int:
    """The user's pending count; computed once per doorbell for everyone with the same scope."""
    scope = None if doorbell is None else _scope(user)
    if scope is None:
        return queries.pending_count(user)
    return _shared((doorbell, scope, "", ""), lambda: queries.pending_count(user))


def pending_matching_count(user: object, workflow: str, q: str, doorbell: Doorbell | None = None) -> int:
    """The inbox's "N pending matching" for its filters, once per doorbell and filter."""
    if not workflow and not q:
        return pending_count(user, doorbell)
    scope = None if doorbell is None else _scope(user)
    if scope is None:
        return queries.pending_matching_count(user, workflow=workflow, q=q)
    return _shared(
        (doorbell, scope, workflow, q), lambda: queries.pending_matching_count(user, workflow=workflow, q=q)
    )


def forget() -> None:
    """Drop every cached count (tests)."""
    shared_values.forget()
