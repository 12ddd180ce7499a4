"""Who may answer a question: assignees, claims and the quorum's rules (``refusal``, which
``wfapp.human.permissions`` asks), and the inbox's tabs (``for_tab``).

The rules live in ``engine.human`` (declared on the question, folded from the log); the row's
assignment columns are kept by the store (``wfapp.store.inbox_rows``).
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from engine.human import GROUP_PREFIX, approval_question
from wfapp.models import Interrupt
from wfapp.registry import all_workflows, requester_may_approve
from wfapp.store.inbox_rows import SEP, decode

TABS = ("all", "mine", "groups", "unassigned", "overdue")


# -- who may answer ----------------------------------------------------------------------------------


def _names_of(user: Any) -> set[str]:
    """The assignee names that designate ``user``: their username and their groups."""
    groups = user.groups.values_list("name", flat=True)
    return {str(user.get_username()), *(f"{GROUP_PREFIX}{name}" for name in groups)}


def requester_excluded(row: Interrupt) -> bool:
    """Whether the run's requester is kept from answering ``row`` (four-eyes): as the question
    declares (``exclude_requester``), else for an approval question unless its workflow is one
    of ``settings.WFAPP_REQUESTER_MAY_APPROVE``. Costs no query."""
    declared = (row.policy or {}).get("exclude_requester")
    if declared is not None:
        return bool(declared)
    return approval_question(row.response_schema) and not requester_may_approve(row.workflow)


def is_requester(user: Any, row: Interrupt) -> bool:
    """Whether ``user`` started the run that asks ``row``."""
    requester = row.session.created_by_id
    return requester is not None and requester == user.pk


def may_override_claims(user: Any) -> bool:
    """Whether ``user`` may answer over someone else's claim, once they confirm it
    (``overridden_claim``): superusers and those who may reassign questions."""
    return bool(user.is_superuser or user.has_perm("wfapp.reassign_interrupt"))


def overridden_claim(user: Any, row: Interrupt) -> str | None:
    """The holder of ``row`` that an answer by ``user`` would override (None: none, or theirs)."""
    holder = row.claimed_by
    return holder if holder and holder != str(user.get_username()) else None


def refusal(user: Any, row: Interrupt) -> str | None:
    """Why ``user`` (who may answer questions) may not answer ``row``; None when they may.

    Assignees bind everyone but superusers; claims bind everyone but those who may override
    them (``may_override_claims``: they answer over one once they confirm it, which the
    answering service asks); the quorum's rules (an approval counts once) and four-eyes (the requester kept out, ``requester_excluded``) bind everyone.
    """
    name = str(user.get_username())
    if requester_excluded(row) and is_requester(user, row):
        return f"{name} started this run and may not approve it"
    if any(given.get("actor") == name for given in row.approvals or []):
        return f"{name} has already approved this question; an approval counts once"
    if row.claimed_by and row.claimed_by != name and not may_override_claims(user):
        return f"this question is claimed by {row.claimed_by}"
    if user.is_superuser:
        return None
    assignees = decode(row.assignees)
    if assignees and not _names_of(user) & set(assignees):
        return f"this question is assigned to {', '.join(assignees)}"
    return None


def assigned_by_workflows(group: str) -> list[tuple[str, str]]:
    """The questions (workflow, interrupt id) that registered workflows assigned to ``group``:
    renaming or deleting it would fail every new run that asks them again (one query)."""
    return list(
        Interrupt.objects.filter(
            workflow__in=list(all_workflows()), assignees__contains=f"{SEP}{GROUP_PREFIX}{group}{SEP}"
        )
        .order_by("workflow", "interrupt_id")
        .values_list("workflow", "interrupt_id")
        .distinct()
    )


# -- the inbox's tabs --------------------------------------------------------------------------------


def for_tab(rows: QuerySet[Interrupt], user: Any, tab: str) -> QuerySet[Interrupt]:
    """``rows`` narrowed to one inbox tab: mine (assigned to or claimed by me), my groups,
    unassigned, overdue; anything else is all of them."""
    if tab == "mine":
        name = str(user.get_username())
        return rows.filter(Q(assignees__contains=f"{SEP}{name}{SEP}") | Q(claimed_by=name))
    if tab == "groups":
        groups = list(user.groups.values_list("name", flat=True))
        if not groups:
            return rows.none()
        match = Q()
        for group in groups:
            match |= Q(assignees__contains=f"{SEP}{GROUP_PREFIX}{group}{SEP}")
        return rows.filter(match)
    if tab == "unassigned":
        return rows.filter(assignees="", claimed_by="")
    if tab == "overdue":
        return rows.filter(due_at__lt=timezone.now())
    return rows
