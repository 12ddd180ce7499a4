"""The inbox row's assignment columns, kept by the store in the transaction of the events they
mirror: who a question is assigned to (``assignees``), who holds it, its timers and its quorum.

- ``unknown_names_sync``: the directory the engine checks a question's assignees against when
  it is asked, through ``DjangoEventStore.unknown_names`` (an unknown name fails the node);
- ``row_fields``, ``fold_row_answer``, ``apply_decision``: the ``Interrupt`` row's assignment
  columns;
- ``apply_decision`` sends ``wfapp.store.hooks.decided`` inside each decision's transaction.

The rules themselves live in ``engine.human``; who may answer is ``wfapp.human.assignment``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from engine.errors import AskingClosedError, InterruptClaimedError
from engine.human import DEADLINE_ACTOR, GROUP_PREFIX, HumanPolicy, fold_answer, next_timer
from wfapp.models import Interrupt, InterruptStatus
from wfapp.store.hooks import decided

SEP = "|"


def _moment(epoch: float | None) -> datetime | None:
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None


def encode(names: list[str]) -> str:
    """``["ann", "group:finance"]`` -> ``"|ann|group:finance|"`` (what ``assignees`` holds)."""
    return f"{SEP}{SEP.join(names)}{SEP}" if names else ""


def decode(text: str) -> list[str]:
    return [name for name in text.split(SEP) if name]


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
        if SEP in name or name == DEADLINE_ACTOR or plain not in known:
            unknown.append(name)
    return unknown


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
    asked_at = data.get("request_seq")
    if asked_at is not None:  # a person's decision names its asking: never another one
        rows = rows.filter(request_seq=asked_at)
    row = rows.only("pk", "policy", "assignees").first()
    if row is None:
        if asked_at is not None:
            raise AskingClosedError(str(data.get("interrupt_id")), int(asked_at))
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
