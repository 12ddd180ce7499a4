"""From what happened to who is told: notices, once each, fanned out into deliveries.

``collect`` looks at the inbox and the runs after the fact (nothing in the answer or turn path
waits for it): each pending question asked since the last look becomes a ``question`` notice,
each failed run a ``failed`` notice. ``post`` records any notice (the team features' assigned,
escalated and overdue ones call it too, in their decision's transaction). A notice's ``key`` is unique, so however many
processes collect at once each notice and its deliveries are written once.

Recipients: the users named (``recipients=``), else the question's assignees when it has any
(users, and the members of ``group:`` groups, of them only those who may view the workflow: an
assignment grants no access), else the active users who may answer the
workflow (``wfapp.human.permissions.users_who_may``); those with an email address are mailed. Each
configured webhook URL (``WFAPP_WEBHOOK_URLS``, from settings only) gets every notice.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

from engine.human import GROUP_PREFIX
from wfapp.human.permissions import users_who_may
from wfapp.models import (
    Channel,
    Delivery,
    Interrupt,
    InterruptStatus,
    Notice,
    NoticeKind,
    NotifyPreference,
    RunStatus,
    Session,
)
from wfapp.store.inbox_rows import decode

# How far back a collect looks again (a transaction committing late still has its rows seen).
OVERLAP = timedelta(seconds=60)
# How far back a process's first collect looks (questions asked while nothing collected).
FIRST_LOOK = timedelta(days=1)

BATCH = 500  # notices one collect records at most per kind (the next one goes on from there)

_marks: dict[str, datetime] = {}  # per kind: up to when this process has collected


def link(path: str) -> str:
    """An absolute address of the dashboard's ``path`` (``WFAPP_BASE_URL``)."""
    return f"{settings.WFAPP_BASE_URL}{path}"


def _since(kind: str, now: datetime) -> datetime:
    return _marks.get(kind, now - FIRST_LOOK) - OVERLAP


def mention_payload(
    key: str, session_id: str, workflow: str, author: str, text: str, row: Interrupt | None
) -> dict[str, Any]:
    """What a ``mentioned`` notice carries: who said what, on which run (and question)."""
    payload: dict[str, Any] = {
        "event": "mentioned",
        "notice": key,
        "workflow": workflow,
        "run": {"id": session_id, "url": link(reverse("run", args=[session_id]))},
        "comment": {"author": author, "text": text},
        "at": time.time(),
    }
    if row is not None:
        payload["question"] = {
            "id": row.pk,
            "interrupt_id": row.interrupt_id,
            "message": row.message,
            "url": link(reverse("interrupt", args=[row.pk])),
        }
    return payload


def question_payload(kind: str, key: str, row: Interrupt) -> dict[str, Any]:
    return {
        "event": kind,
        "notice": key,
        "workflow": row.workflow,
        "run": {
            "id": row.session_id,
            "url": link(reverse("run", args=[row.session_id])),
            "summary": row.session.summary,
        },
        "question": {
            "id": row.pk,
            "interrupt_id": row.interrupt_id,
            "message": row.message,
            "url": link(reverse("interrupt", args=[row.pk])),
        },
        "at": time.time(),
    }


def failure_payload(key: str, session: Session) -> dict[str, Any]:
    return {
        "event": NoticeKind.FAILED.value,
        "notice": key,
        "workflow": session.workflow,
        "run": {
            "id": session.pk,
            "url": link(reverse("run", args=[session.pk])),
            "status": session.status,
            "summary": session.summary,
        },
        "error": session.error,
        "at": time.time(),
    }


def collect(now: datetime | None = None) -> int:
    """Record notices for questions asked and runs failed since the last look; how many are new."""
    now = now or timezone.now()
    made = 0
    asked = Interrupt.objects.filter(
        status=InterruptStatus.PENDING, created_at__gte=_since("question", now)
    ).exclude(notices__kind=NoticeKind.QUESTION)
    rows = list(asked.order_by("created_at", "id")[:BATCH])
    for row in rows:
        key = f"question:{row.pk}"
        made += post(
            NoticeKind.QUESTION, key, row.session_id, question_payload("question", key, row), row=row
        )
    _marks["question"] = rows[-1].created_at if len(rows) == BATCH else now
    failed = Session.objects.filter(status=RunStatus.FAILED, updated_at__gte=_since("failed", now))
    runs = list(failed.order_by("updated_at")[:BATCH])
    for session in runs:
        key = f"failed:{session.pk}:{session.last_seq}"
        made += post(
            NoticeKind.FAILED, key, session.pk, failure_payload(key, session), workflow=session.workflow
        )
    _marks["failed"] = runs[-1].updated_at if len(runs) == BATCH else now
    return made


def post(
    kind: str,
    key: str,
    session_id: str,
    payload: dict[str, Any],
    *,
    row: Interrupt | None = None,
    workflow: str | None = None,
    recipients: Iterable[Any] | None = None,
) -> int:
    """Record the notice ``key`` and its deliveries unless it exists; 1 if it was new, else 0."""
    if Notice.objects.filter(key=key).exists():
        return 0
    if recipients is not None:
        users = list(recipients)
    else:
        users = question_recipients(row) if row is not None else _may_answer(workflow or "")
    try:
        with transaction.atomic():
            notice = Notice.objects.create(
                key=key, kind=kind, session_id=session_id, interrupt=row, payload=payload
            )
            Delivery.objects.bulk_create(_deliveries(notice, users))
    except IntegrityError:
        return 0  # another process recorded it first
    return 1


def _may_answer(workflow: str) -> list[Any]:
    return list(users_who_may("answer", workflow))


def question_recipients(row: Interrupt) -> list[Any]:
    """Who is told about the question ``row``: its assignees when it has any (users, and the
    members of ``group:`` groups), else whoever may answer its workflow."""
    names = decode(row.assignees)
    if not names:
        return _may_answer(row.workflow)
    return named_users(names, row.workflow)


def named_users(names: list[str], workflow: str) -> list[Any]:
    """The active users ``names`` designate (user names and the members of ``group:`` names)
    who may view ``workflow``: a notice tells nobody of what they may not see."""
    from django.contrib.auth import get_user_model

    users = [name for name in names if not name.startswith(GROUP_PREFIX)]
    groups = [name[len(GROUP_PREFIX) :] for name in names if name.startswith(GROUP_PREFIX)]
    found = (
        get_user_model()
        .objects.filter(is_active=True)
        .filter(Q(username__in=users) | Q(groups__name__in=groups))
        .filter(pk__in=users_who_may("view", workflow).values("pk"))
    )
    return list(found.distinct())


def next_digest(now: datetime) -> datetime:
    """The next digest time: a multiple of ``WFAPP_DIGEST_MINUTES`` since the epoch."""
    period = max(60.0, float(settings.WFAPP_DIGEST_MINUTES) * 60)
    return datetime.fromtimestamp(math.ceil(now.timestamp() / period) * period, tz=now.tzinfo)


def _deliveries(notice: Notice, users: list[Any]) -> list[Delivery]:
    now = timezone.now()
    out: list[Delivery] = []
    if settings.WFAPP_NOTIFY_EMAIL:
        mailed = [user for user in users if user.email]
        digest = set(
            NotifyPreference.objects.filter(user__in=mailed, digest=True).values_list("user_id", flat=True)
        )
        for user in mailed:
            held = user.pk in digest
            out.append(
                Delivery(
                    notice=notice,
                    channel=Channel.EMAIL,
                    target=user.email,
                    recipient=user,
                    digest=held,
                    next_attempt_at=next_digest(now) if held else now,
                )
            )
    for url in settings.WFAPP_WEBHOOK_URLS:
        out.append(Delivery(notice=notice, channel=Channel.WEBHOOK, target=url, next_attempt_at=now))
    return out


def forget() -> None:
    """Start afresh, as a new process would (tests)."""
    _marks.clear()
