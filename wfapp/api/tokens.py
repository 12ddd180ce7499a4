"""Personal API tokens: issue one (shown once), look one up by its digest, revoke one."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.utils import timezone

from .models import ApiToken

PREFIX = "wfa_"
NAME_LIMIT = 100
# Record the last use at most this often: a read does not become a write per request.
LAST_USE_GRANULARITY = timedelta(seconds=60)


def digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def fill(record: ApiToken) -> str:
    """Give an unsaved token record a new secret; return the token text (never stored)."""
    text = PREFIX + secrets.token_urlsafe(32)
    record.prefix, record.digest = text[:10], digest(text)
    return text


def issue(user: Any, name: str) -> tuple[ApiToken, str]:
    """Create a token for ``user``; return its record and the token text (shown once)."""
    name = name.strip()
    if not name:
        raise ValueError("A token needs a name (what it is for), such as 'ticketing system'.")
    if len(name) > NAME_LIMIT:
        raise ValueError(f"A token's name has at most {NAME_LIMIT} characters.")
    record = ApiToken(user=user, name=name)
    text = fill(record)
    record.save()
    return record, text


def user_for(text: str) -> Any:
    """The active user a token belongs to, or None (unknown, revoked or inactive user)."""
    if not text.startswith(PREFIX) or len(text) > 200:
        return None
    record = (
        ApiToken.objects.select_related("user")
        .filter(digest=digest(text), revoked_at__isnull=True, user__is_active=True)
        .first()
    )
    if record is None:
        return None
    now = timezone.now()
    if record.last_used_at is None or record.last_used_at < now - LAST_USE_GRANULARITY:
        stale = Q(last_used_at__isnull=True) | Q(last_used_at__lt=now - LAST_USE_GRANULARITY)
        ApiToken.objects.filter(stale, pk=record.pk).update(last_used_at=now)
    user = record.user
    user.api_token_id = record.pk  # type: ignore[attr-defined]  # a stream checks the token again
    return user


def still_active(token_id: int) -> bool:
    return ApiToken.objects.filter(pk=token_id, revoked_at__isnull=True, user__is_active=True).exists()


def revoke(user: Any, token_id: int) -> bool:
    """Revoke one of ``user``'s tokens; False if it is not theirs or already revoked."""
    changed = ApiToken.objects.filter(pk=token_id, user=user, revoked_at__isnull=True).update(
        revoked_at=timezone.now()
    )
    return changed > 0
