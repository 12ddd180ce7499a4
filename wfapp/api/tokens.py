"""Personal API tokens: who may create one for whom, issue (shown once), look up, revoke.

Rules: a user creates tokens for themselves; only a superuser creates one for someone else, and
never for a user who holds a right the creator lacks. A token expires after
``WFAPP_API_TOKEN_DAYS`` days unless its creator chose otherwise (``None``: never), may be
limited to reading and to named workflows, and is revoked when its user is deactivated or
changes password (``wfapp.api.token_revocation``). Every creation and revocation is kept in
the admin's action log (``LogEntry``: the token's History page in the admin, and "Recent
actions"), naming who did it.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.contrib.admin.models import ADDITION, CHANGE, LogEntry
from django.db.models import Q
from django.utils import timezone

from wfapp.errors import NotPermitted
from wfapp.models import ApiToken
from wfapp.registry import all_workflows

PREFIX = "wfa_"
NAME_LIMIT = 100
MAX_DAYS = 3650
# Record the last use at most this often: a read does not become a write per request.
LAST_USE_GRANULARITY = timedelta(seconds=60)
DEFAULT = object()  # ``issue``'s ``days`` when not given: ``WFAPP_API_TOKEN_DAYS``


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def fill(record: ApiToken) -> str:
    """Give an unsaved token record a new secret; return the token text (never stored)."""
    text = PREFIX + secrets.token_urlsafe(32)
    record.prefix, record.digest = text[:10], digest(text)
    return text


def default_days() -> int | None:
    days = int(settings.WFAPP_API_TOKEN_DAYS)
    return days if days > 0 else None


def refusal(creator: Any, owner: Any) -> str | None:
    """Why ``creator`` may not create a token acting as ``owner`` (None: they may)."""
    if creator is None:
        return None  # the command line: whoever runs it holds the server
    if not creator.is_active or not owner.is_active:
        return "Tokens are only for active users."
    if owner.pk != creator.pk and not creator.is_superuser:
        return "Only a superuser may create a token for someone else."
    if outranks(owner, creator):
        return f"{owner} holds rights that {creator} does not: a token would act with them."
    return None


def outranks(owner: Any, creator: Any) -> bool:
    """Whether ``owner`` holds a right ``creator`` lacks (superuser, staff, a permission, a group)."""
    if owner.pk == creator.pk or creator.is_superuser:
        return False
    if owner.is_superuser or (owner.is_staff and not creator.is_staff):
        return True
    if not owner.get_all_permissions() <= creator.get_all_permissions():
        return True
    return not set(owner.groups.values_list("pk", flat=True)) <= set(
        creator.groups.values_list("pk", flat=True)
    )


def workflow_names(names: Iterable[str]) -> list[str]:
    chosen = sorted({name.strip() for name in names if name.strip()})
    unknown = [name for name in chosen if name not in all_workflows()]
    if unknown:
        raise ValueError(f"No such workflow: {', '.join(unknown)}.")
    return chosen


def _expiry(days: Any) -> Any:
    if days is DEFAULT:
        days = default_days()
    if days is None:
        return None
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= MAX_DAYS:
        raise ValueError(f"A token lasts from 1 to {MAX_DAYS} days (or never expires).")
    return timezone.now() + timedelta(days=days)


def issue(
    owner: Any,
    name: str,
    *,
    by: Any = None,
    days: Any = DEFAULT,
    read_only: bool = False,
    workflows: Iterable[str] = (),
) -> tuple[ApiToken, str]:
    """Create a token acting as ``owner``, made by ``by`` (None: the command line); return its
    record and its text (shown once). ``ValueError`` for bad input, ``NotPermitted`` when
    ``by`` may not; either way nothing is created."""
    name = name.strip()
    if not name:
        raise ValueError("A token needs a name (what it is for), such as 'ticketing system'.")
    if len(name) > NAME_LIMIT:
        raise ValueError(f"A token's name has at most {NAME_LIMIT} characters.")
    record = ApiToken(
        user=owner,
        name=name,
        expires_at=_expiry(days),
        read_only=read_only,
        workflows=workflow_names(workflows),
    )
    refused = refusal(by, owner)
    if refused is not None:
        raise NotPermitted(refused)
    text = fill(record)
    record.save()
    _audit(by or owner, [record], ADDITION, f"Created {describe(record)}.")
    return record, text


def describe(record: ApiToken) -> str:
    """The token in words for the audit: whose, its limits and its expiry."""
    limits = ["read-only"] if record.read_only else []
    if record.workflows:
        limits.append("workflows " + ", ".join(record.workflows))
    expires = f"expires {record.expires_at:%Y-%m-%d %H:%M} UTC" if record.expires_at else "never expires"
    return f"token {record.prefix}… for {record.user} ({'; '.join([*limits, expires])})"


def _audit(actor: Any, records: list[ApiToken], flag: int, message: str) -> None:
    if records:
        LogEntry.objects.log_actions(actor.pk, records, flag, change_message=message)


def _live() -> Q:
    return Q(revoked_at__isnull=True) & (Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))


def user_for(text: str) -> Any:
    """The active user a token belongs to, or None (unknown, revoked, expired or inactive user).

    The user object carries the token's limits: ``api_token_id`` (a stream checks the token
    again), ``api_read_only`` and ``wfapp_workflows`` (which ``wfapp.human.permissions`` honours).
    """
    if not text.startswith(PREFIX) or len(text) > 200:
        return None
    record = (
        ApiToken.objects.select_related("user")
        .filter(_live(), digest=digest(text), user__is_active=True)
        .first()
    )
    if record is None:
        return None
    now = timezone.now()
    if record.last_used_at is None or record.last_used_at < now - LAST_USE_GRANULARITY:
        stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USE_GRANULARITY)
        ApiToken.objects.filter(stale, pk=record.pk).update(last_used_at=now)
    return _acting(record)


def _acting(record: ApiToken) -> Any:
    user: Any = record.user
    user.api_token_id = record.pk
    user.api_read_only = record.read_only
    if record.workflows:
        user.wfapp_workflows = frozenset(record.workflows)
    return user


def current_user(token_id: int) -> Any:
    """The user token ``token_id`` acts as, with its limits, while it is live; else None."""
    record = (
        ApiToken.objects.select_related("user").filter(_live(), pk=token_id, user__is_active=True).first()
    )
    return None if record is None else _acting(record)


def revoke(user: Any, token_id: int, *, by: Any = None) -> bool:
    """Revoke one of ``user``'s tokens; False if it is not theirs or already revoked."""
    return revoke_rows(ApiToken.objects.filter(pk=token_id, user=user), by or user, "revoked") > 0


def revoke_rows(rows: Any, by: Any, because: str) -> int:
    """Revoke the active tokens among ``rows`` (a queryset), naming ``by`` and why in the audit."""
    picked = list(rows.filter(revoked_at__isnull=True).select_related("user"))
    changed = ApiToken.objects.filter(pk__in=[row.pk for row in picked], revoked_at__isnull=True).update(
        revoked_at=timezone.now(), revoked_because=because[:200]
    )
    _audit(by, picked, CHANGE, f"Revoked ({because}).")
    return changed
