"""Who must answer a question, who holds it, and how the inbox row mirrors the log's decisions.

The rules live in ``engine.human`` (declared on the question, folded from the log); this
module knows Django's users and groups:

- ``unknown_names_sync``: the directory the engine checks a question's assignees against when
  it is asked, through ``DjangoEventStore.unknown_names`` (an unknown name fails the node);
- ``refusal``: why a user may not answer a given question (``wfapp.permissions`` asks it);
- ``row_fields``, ``fold_answer``, ``apply_decision``: the ``Interrupt`` row's assignment
  columns, kept by the store in the transaction of the events they mirror;
- the inbox's tabs (``for_tab``) and ``decided``, the signal sent inside each decision's
  transaction (claim, unclaim, reassign, escalate, remind): notifications record their notice
  there, so a notice exists exactly when its decision does.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.db.models import Q, QuerySet
from django.dispatch import Signal
from django.utils import timezone

from engine.errors import InterruptClaimedError
from engine.human import DEADLINE_ACTOR, GROUP_PREFIX, HumanPolicy, fold_answer, next_timer

from .models import Interrupt, InterruptStatus

# Sent in the append's transaction of each decision on a question, with ``session_id``,
# ``interrupt_id``, ``decision`` (claim, unclaim, reassign, escalate, remind), ``actor``, ``users``
# and ``seq`` (the decision event's). What a receiver writes commits, or rolls back, with it; an
# exception it raises refuses the decision.
decided = Signal()

TABS = ("all", "mine", "groups", "unassigned", "overdue")
_SEP = "|"


def _moment(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None


def encode(names: list[str]) -> str:
    """``["ann", "group:finance"]`` -> ``"|ann|group:finance|"`` (what ``assignees`` holds)."""
    return f"{_SEP}{_SEP.join(names)}{_SEP}" if names else ""


def decode(text: str) -> list[str]:
    return [name for name in text.split(_SEP) if name]


# -- the directory ---------------------------------------------------------------------------------


def unknown_names_sync(names: list[str]) -> list[str]:
    """The names among ``names`` that are no user (by username) and no ``group:`` group."""
    users = [name for name in names if not name.startswith(GROUP_PREFIX)]
    groups = [name[len(GROUP_PREFIX) :] for name in names if name.startswith(GROUP_PREFIX)]
    known_users = set(get_user_model().objects.filter(username__in=users).values_list("username", flat=True))
    known_groups = set(Group.objects.filter(name__in=groups).values_list("name", flat=True))
    unknown = []
    for name in names:
        plain = name[len(GROUP_PREFIX) :] if name.startswith(GROUP_PREFIX) else name
        known = known_groups if name.startswith(GROUP_PREFIX) else known_users
        if _SEP in name or name == DEADLINE_ACTOR or plain not in known:
            unknown.append(name)
    return unknown


# -- who may answer ----------------------------------------------------------------------------------


def _names_of(user: Any) -> set[str]:
    """The assignee names that designate ``user``: their username and their groups."""
    groups = user.groups.values_list("name", flat=True)
    return {str(user.get_username()), *(f"{GROUP_PREFIX}{name}" for name in groups)}


def refusal(user: Any, row: Interrupt) -> str | None:
    """Why ``user`` (who may answer questions) may not answer ``row``; None when they may.

    Assignees and claims bind everyone but superusers; the quorum's rules (an approval counts
    once, the requester kept out) bind everyone.
    """
    name = str(user.get_username())
    policy = row.policy or {}
    if policy.get("exclude_requester") and row.session.created_by_id == user.pk:
        return f"{name} started this run and may not approve it"
    if any(given.get("actor") == name for given in row.approvals or []):
        return f"{name} has already approved this question; an approval counts once"
    if user.is_superuser:
        return None
    if row.claimed_by and row.claimed_by != name:
        return f"this question is claimed by {row.claimed_by}"
    assignees = decode(row.assignees)
    if assignees and not _names_of(user) & set(assignees):
        return f"this question is assigned to {', '.join(assignees)}"
    return None


# -- the Interrupt row -------------------------------------------------------------------------------


def row_fields(policy: HumanPolicy | None) -> dict[str, Any]:
    """The assignment columns of a new ``Interrupt`` row asked with ``policy``."""
    if policy is None:
        return {}
    return {
        "assignees": encode(policy.assignees),
        "due_at": _moment(policy.due_at),
        "timer_at": _moment(next_timer(policy)),
        "approvals_required": policy.approvals_required,
        "policy": policy.model_dump(mode="json"),
    }


def fold_row_answer(
    session_id: str, interrupt_id: str, actor: str, value: Any, timed_out: bool
) -> tuple[bool, Any]:
    """Fold an answer into the pending row's quorum: ``(resolves, value for the row)``.

    An approval short of the quorum is added to ``approvals`` here (the row stays pending).
    """
    row = (
        Interrupt.objects.filter(
            session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.PENDING
        )
        .only("pk", "policy", "approvals")
        .first()
    )
    if row is None or not row.policy:
        return True, value
    policy = HumanPolicy.model_validate(row.policy)
    resolved, folded = fold_answer(policy, list(row.approvals or []), actor, value, timed_out)
    if timed_out:
        folded = None
    if not resolved:
        Interrupt.objects.filter(pk=row.pk).update(approvals=folded)
    return resolved, folded


def apply_decision(session_id: str, data: dict[str, Any], seq: int) -> None:
    """Mirror one ``assignment`` event's decision (event ``seq``) on the pending row, then tell
    ``decided``'s receivers (all in the append's transaction)."""
    rows = Interrupt.objects.filter(
        session_id=session_id, interrupt_id=data.get("interrupt_id"), status=InterruptStatus.PENDING
    )
    row = rows.only("pk", "policy", "assignees").first()
    if row is None:
        return
    decision = data.get("decision")
    changes: dict[str, Any] = {}
    users = list(data.get("users") or [])
    if decision == "claim":
        # Guarded: of two claims that both passed their check, the second one's append fails.
        if not rows.filter(pk=row.pk, claimed_by="").update(claimed_by=data.get("actor") or ""):
            holder = rows.values_list("claimed_by", flat=True).first() or ""
            raise InterruptClaimedError(str(data.get("interrupt_id")), holder)
    elif decision == "unclaim":
        changes["claimed_by"] = ""
    elif decision == "reassign":
        changes["assignees"] = encode(users)
        single = len(users) == 1 and not users[0].startswith(GROUP_PREFIX)
        changes["claimed_by"] = users[0] if single else ""
    elif decision in ("escalate", "remind"):
        if decision == "escalate":
            current = decode(row.assignees)
            changes["assignees"] = encode([*current, *(name for name in users if name not in current)])
        policy = HumanPolicy.model_validate(row.policy) if row.policy else None
        changes["timer_at"] = _moment(next_timer(policy, after=float(data.get("at") or 0)))
    if changes:
        Interrupt.objects.filter(pk=row.pk).update(**changes)
    decided.send(
        Interrupt,
        session_id=session_id,
        interrupt_id=data.get("interrupt_id"),
        decision=decision,
        actor=data.get("actor"),
        users=users,
        seq=seq,
    )


# -- the inbox's tabs --------------------------------------------------------------------------------


def for_tab(rows: QuerySet[Interrupt], user: Any, tab: str) -> QuerySet[Interrupt]:
    """``rows`` narrowed to one inbox tab: mine (assigned to or claimed by me), my groups,
    unassigned, overdue; anything else is all of them."""
    if tab == "mine":
        name = str(user.get_username())
        return rows.filter(Q(assignees__contains=f"{_SEP}{name}{_SEP}") | Q(claimed_by=name))
    if tab == "groups":
        groups = list(user.groups.values_list("name", flat=True))
        if not groups:
            return rows.none()
        match = Q()
        for group in groups:
            match |= Q(assignees__contains=f"{_SEP}{GROUP_PREFIX}{group}{_SEP}")
        return rows.filter(match)
    if tab == "unassigned":
        return rows.filter(assignees="", claimed_by="")
    if tab == "overdue":
        return rows.filter(due_at__lt=timezone.now())
    return rows
