"""Notices for decisions on questions: assigned (reassigned), escalated, about to be overdue; and
for the users a comment mentions as ``@name`` (``mentioned``, recorded once the comment is).

``wfapp.store.hooks.decided`` is sent inside the transaction that appends each decision (a
store's, the runtime's maintenance for timers), and the notice is recorded right there: it
commits with the decision or not at all, so a crash between the two cannot lose it, and a
decision rolled back leaves none. Its key names the decision's event, so the notice is
recorded once. Only these decisions pay for it (claims and releases notify no one); the pump
sends the notice like any other. A reminder (``remind_after``) is the "about to be overdue" notice.
"""

from __future__ import annotations

import re
from typing import Any

from wfapp.models import Interrupt, InterruptStatus, NoticeKind
from wfapp.notify import outbox
from wfapp.store.hooks import commented, decided

KINDS = {"reassign": NoticeKind.ASSIGNED, "escalate": NoticeKind.ESCALATED, "remind": NoticeKind.OVERDUE}


def record(session_id: str, interrupt_id: str, decision: str, users: list[str], seq: int) -> int:
    """Record the notice for the decision of event ``seq``; 1 if recorded (synchronous: it queries)."""
    kind = KINDS[decision]
    row = (
        Interrupt.objects.filter(
            session_id=session_id, interrupt_id=interrupt_id, status=InterruptStatus.PENDING
        )
        .order_by("-request_seq")
        .first()
    )
    if row is None:
        return 0
    key = f"{kind}:{row.pk}:{seq}"
    # The newly eligible are told of an assignment or an escalation; everyone concerned of a reminder.
    told = outbox.named_users(users, row.workflow) if users and kind != NoticeKind.OVERDUE else None
    payload = outbox.question_payload(kind, key, row)
    return outbox.post(kind, key, session_id, payload, row=row, recipients=told)


def _on_decision(
    sender: Any,
    *,
    session_id: str,
    interrupt_id: str,
    decision: str,
    seq: int,
    users: Any = None,
    **_: Any,
) -> None:
    if decision in KINDS:
        record(session_id, interrupt_id, decision, list(users or []), seq)


def connect() -> None:
    decided.connect(_on_decision, dispatch_uid="wfapp.notify.triggers")
    commented.connect(_on_comment, dispatch_uid="wfapp.notify.triggers.mentions")


def _on_comment(sender: Any, **comment: Any) -> None:
    mentioned(**comment)


MENTION = re.compile(r"(?<![\w@.])@([\w.+-]{1,150})")


def mentioned(
    session_id: str, workflow: str, seq: int, author: str, text: str, interrupt: int | None, **_: Any
) -> int:
    """Tell the users ``text`` mentions as ``@name`` (who may view the run, not its author)."""
    names = sorted({name.rstrip(".") for name in MENTION.findall(text)} - {author})
    told = outbox.named_users(names, workflow) if names else []
    if not told:
        return 0
    row = Interrupt.objects.filter(pk=interrupt).first() if interrupt is not None else None
    key = f"{NoticeKind.MENTIONED}:{session_id}:{seq}"
    payload = outbox.mention_payload(key, session_id, workflow, author, text, row)
    return outbox.post(NoticeKind.MENTIONED, key, session_id, payload, row=row, recipients=told)
