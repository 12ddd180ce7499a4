"""The API's records: personal API tokens (stored hashed) and idempotency keys.

Both belong to the ``wfapp`` app, so they share its migrations.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A personal API token: only its SHA-256 digest is stored, never the token itself.

    Tokens carry 256 random bits, so a fast digest is enough (no password-style stretching):
    nobody can guess a token from its digest. A token may expire (``expires_at``), be limited
    to reading (``read_only``) and to some workflows (``workflows``: their names; empty: all
    the user's); ``wfapp.api.tokens`` decides who may create one and revokes them.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16)  # the token's first characters, to recognise it
    digest = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_because = models.CharField(max_length=200, blank=True, default="")
    expires_at = models.DateTimeField(null=True, blank=True, help_text="Empty: the token never expires.")
    read_only = models.BooleanField(default=False, help_text="Only reads: every change is refused (403).")
    workflows = models.JSONField(
        default=list, blank=True, help_text="The workflows it reaches (names); empty: all the user's."
    )

    class Meta:
        app_label = "wfapp"
        ordering = ["-created_at", "-id"]
        verbose_name = "API token"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def active(self) -> bool:
        return self.revoked_at is None and not self.expired

    @property
    def expired(self) -> bool:
        from django.utils import timezone

        return self.expires_at is not None and self.expires_at <= timezone.now()


class IdempotencyRecord(models.Model):
    """The first result of a request sent with an ``Idempotency-Key`` (per user).

    A row without ``status_code`` is a request still being handled: a concurrent retry of
    the same key waits for it instead of doing the work twice.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=200)
    fingerprint = models.CharField(max_length=64)  # the method, path and body the key was used with
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    response = models.TextField(blank=True)  # the body as sent, so a replay is byte for byte the same
    location = models.CharField(max_length=300, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        app_label = "wfapp"
        constraints = [models.UniqueConstraint(fields=["user", "key"], name="wfapp_idempotency_user_key")]

    def __str__(self) -> str:
        return f"{self.key} ({self.status_code or 'in progress'})"
