"""Revoke a user's API tokens when the user is deactivated or their password changes.

A token outliving the credentials it was created under would let a script go on after the
person lost access (deactivated) or after the password was reset because it leaked. A hash
upgrade at login (Django rehashing the same password) is not a change.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models.signals import post_save, pre_save

from wfapp.api import tokens
from wfapp.models import ApiToken

_BECAUSE = "_wfapp_revoke_tokens_because"


def _why(user: Any, update_fields: Any) -> str | None:
    """Why saving ``user`` revokes their tokens (None: it does not)."""
    if user.pk is None:
        return None
    fields = set(update_fields) if update_fields is not None else None
    if fields is not None and not fields & {"password", "is_active"}:
        return None  # last_login and the like
    before = get_user_model().objects.filter(pk=user.pk).values("password", "is_active").first()
    if before is None:
        return None
    if before["is_active"] and not user.is_active:
        return "the user was deactivated"
    rehashed = fields == {"password"} and getattr(user, "_password", None) is None
    if before["password"] != user.password and not rehashed:
        return "the user's password changed"
    return None


def note_change(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    setattr(instance, _BECAUSE, _why(instance, update_fields))


def revoke_after_change(sender: Any, instance: Any, **kwargs: Any) -> None:
    because = getattr(instance, _BECAUSE, None)
    if because:
        setattr(instance, _BECAUSE, None)
        tokens.revoke_rows(ApiToken.objects.filter(user=instance), instance, because)


def connect() -> None:
    """Listen to every save of a user (``apps.ready``)."""
    user_model = get_user_model()
    pre_save.connect(note_change, sender=user_model, dispatch_uid="wfapp-token-revocation-note")
    post_save.connect(revoke_after_change, sender=user_model, dispatch_uid="wfapp-token-revocation")
