"""Inbox updates rendered once per distinct view and doorbell, and fanned out to every socket
showing that view.

A doorbell reaches every open inbox; most show the same thing (a team with the same rights, one
operator with several tabs, a wall screen). An inbox's update for one run's doorbell depends on
the viewer's permission scope (``counts.scope``: users of one scope may answer the same
workflows, so they see the same questions), their time zone (times are rendered in it), the
page's filters and tab, and, of the page's
position, only what concerns that run: which of its questions the page shows already and which
of its answers the page still has to close (pages rendered at different moments mostly agree).
Sockets that agree on those share one render
(``presenter.inbox_update_for``) instead of each making its own.

What reads differently per person stays per person: a tab other than "All" (assigned to me, my
groups), and a run whose cards have a holder, assignees or a quorum's approvals ("You hold this",
"You approved", who may release or answer). A run's requester, kept from answering its approvals
(four-eyes), shares its renders only with itself: the key says whether the viewer started the run. A render that turns out to
show such a card (``InboxUpdate.personal``: decided on the rows it rendered, so a claim made
meanwhile cannot leak) is used only by its own viewer; everyone else renders theirs, keyed by
their user. Users of different scopes never share a render.

Entries are keyed by the doorbell ``(session_id, seq)`` and the run's questions as they stand
(id, status, answer seq and time), and expire after ``TTL`` seconds like the shared counts
(``wfapp.web.counts``); sockets asking at once wait for the first one's render (``shared``).
"""

from __future__ import annotations

import functools
from collections.abc import Hashable
from datetime import datetime
from typing import Any

from django.utils import timezone

from wfapp.human.assignment import requester_excluded
from wfapp.models import Interrupt, InterruptStatus, Session
from wfapp.web import counts, presenter
from wfapp.web.counts import Doorbell
from wfapp.web.live import flight
from wfapp.web.live.threads import reads
from wfapp.web.shared import peek, shared

TTL = 2.0


# The run's questions (id, status, answer seq, answered at), when the first was asked, and who
# started the run when one of its questions keeps them from answering (four-eyes), else None.
Asks = tuple[tuple[tuple[int, str, int | None, datetime | None], ...], datetime | None, int | None]


def _asks(doorbell: Doorbell) -> Asks:
    """The run's questions, when the first was asked and its requester (``Asks``), once per doorbell."""

    def read() -> Asks:
        rows = list(
            Interrupt.objects.filter(session_id=doorbell[0])
            .order_by("pk")
            .only(
                "pk",
                "status",
                "answer_seq",
                "answered_at",
                "created_at",
                "policy",
                "response_schema",
                "workflow",
            )
        )
        if not rows:
            return (), None, None
        asks = tuple((row.pk, row.status, row.answer_seq, row.answered_at) for row in rows)
        requester = None
        if any(requester_excluded(row) for row in rows):  # only then do their cards read differently
            requester = Session.objects.filter(pk=doorbell[0]).values_list("created_by_id", flat=True).first()
        return asks, min(row.created_at for row in rows), requester

    return shared(("asks", doorbell), read, TTL)


def _keys(
    user: Any,
    scope: Hashable | None,
    filters: dict[str, Any],
    watermark: int,
    sent: set[int],
    asks_read: Asks,
    doorbell: Doorbell,
    answered_after: int,
    closed_since: datetime | None,
) -> list[Hashable]:
    """The keys a socket's update is shared under: its scope's view first (when it has one and
    shows the "All" tab), then its user's own."""
    asks, first_asked, requester = asks_read
    shown = frozenset(pk for pk, _, _, _ in asks if pk <= watermark or pk in sent)
    since = closed_since
    if since is not None and first_asked is not None and since <= first_asked:
        since = None  # every answer to this run came after it anyway
    # Of the page's position, the update depends on which of the run's answered questions it
    # closes (answered after ``answered_after``, and since ``since``): pages rendered at different
    # moments that close the same ones share the render.
    closes = frozenset(
        pk
        for pk, status, answer_seq, answered_at in asks
        if status == InterruptStatus.ANSWERED
        and (answer_seq or 0) > answered_after
        and (since is None or (answered_at is not None and answered_at >= since))
    )
    zone = timezone.get_current_timezone_name()  # times are rendered in the viewer's zone
    # The run's requester, when kept from answering its approvals (four-eyes), reads its cards
    # differently, so they share renders only with themselves.
    requested = requester is not None and requester == user.pk
    view = (doorbell, asks, zone, requested, tuple(sorted(filters.items())), shown, closes)
    keys: list[Hashable] = [("inbox", "user", user.pk, *view)]
    if scope is not None and filters.get("tab", "all") == "all":
        keys.insert(0, ("inbox", "scope", scope, *view))
    return keys


def _usable(key: Hashable, update: presenter.InboxUpdate, user: Any) -> bool:
    """Whether ``user`` may be sent ``update``: a scope's render unless it is another's personal one."""
    return not (isinstance(key, tuple) and key[1] == "scope" and update.personal and update.viewer != user.pk)


def known_inbox_update(
    user: Any,
    filters: dict[str, Any],
    watermark: int,
    sent: set[int],
    *,
    doorbell: Doorbell,
    answered_after: int,
    closed_since: datetime | None,
) -> tuple[str, set[int]] | None:
    """``inbox_update_async``'s result when another socket of the view rendered it already (None: not yet). It
    never queries, so a socket's event loop asks it first and hands the work to a thread only
    when there is some: with many pages open, most sockets only pick up the shared render."""
    found, asks_read = peek(("asks", doorbell), TTL)
    known, scope = counts.known_scope(user)
    if not found or not known:
        return None
    for key in _keys(
        user, scope, filters, watermark, sent, asks_read, doorbell, answered_after, closed_since
    ):
        hit, update = peek(key, TTL)
        if not hit:
            return None
        if _usable(key, update, user):
            return update.html, set(update.sent)
    return None


async def inbox_update_async(
    user: Any,
    filters: dict[str, Any],
    watermark: int,
    sent: set[int],
    *,
    doorbell: Doorbell,
    answered_after: int,
    closed_since: datetime | None,
) -> tuple[str, set[int]]:
    """``presenter.inbox_update`` for one run's doorbell, shared by the sockets in the same view
    (their scope's, else their user's): the run's questions, the user's scope and each view's
    render are each read in one thread for all the sockets asking at once (``flight``); the
    others await them on the event loop."""
    found, asks_read = peek(("asks", doorbell), TTL)
    if not found:
        asks_read = await flight.once(("asks", doorbell), lambda: reads(_asks)(doorbell))
    known, scope = counts.known_scope(user)
    if not known:
        scope = await reads(counts.scope)(user)
    render = functools.partial(
        presenter.inbox_update_for,
        user,
        filters,
        watermark,
        sent,
        session_id=doorbell[0],
        answered_after=answered_after,
        closed_since=closed_since,
        doorbell=doorbell,
    )
    for key in _keys(
        user, scope, filters, watermark, sent, asks_read, doorbell, answered_after, closed_since
    ):
        hit, kept = peek(key, TTL)
        update: presenter.InboxUpdate = (
            kept  # rendered in one thread, once in this process (``shared``) for this view:
            if hit
            else await flight.once(key, functools.partial(reads(shared), key, render, TTL))
        )
        if _usable(key, update, user):
            break  # the user's own key is always the last, and always usable
    return update.html, set(update.sent)
