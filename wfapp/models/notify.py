"""Notifications' records: what happened (``Notice``), who is told how (``Delivery``) and each try
(``DeliveryAttempt``); a user's preference; the single-use answer links the mails carry.

All of it is written outside the runs' hot path (``wfapp.notify.outbox`` collects notices from
the inbox and the runs afterwards; a decision on a question records its notice in its own
transaction, ``wfapp.notify.triggers``) and is visible in the admin.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models


class NoticeKind(models.TextChoices):
    QUESTION = "question", "question created"
    FAILED = "failed", "run failed"
    ASSIGNED = "assigned", "question assigned"
    ESCALATED = "escalated", "question escalated"
    OVERDUE = "overdue", "question about to be overdue"
    MENTIONED = "mentioned", "mentioned in a comment"


class Notice(models.Model):
    """Something people are told about, once: ``key`` names it (``question:<id>``, ``failed:<run>:<seq>``)."""

    key = models.CharField(max_length=300, unique=True)
    kind = models.CharField(max_length=16, choices=NoticeKind.choices)
    session = models.ForeignKey("wfapp.Session", on_delete=models.CASCADE, related_name="notices")
    interrupt = models.ForeignKey(
        "wfapp.Interrupt", null=True, blank=True, on_delete=models.CASCADE, related_name="notices"
    )
    payload = models.JSONField(default=dict)  # what a webhook receives, the same on every retry
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return self.key


class Channel(models.TextChoices):
    EMAIL = "email"
    WEBHOOK = "webhook"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"
    SENT = "sent"
    FAILED = "failed"  # gave up after the last retry


class Delivery(models.Model):
    """One notice to one mailbox or one webhook URL (from settings), retried with backoff."""

    notice = models.ForeignKey(Notice, on_delete=models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=16, choices=Channel.choices)
    target = models.CharField(max_length=500)  # the email address or the webhook URL
    recipient = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    digest = models.BooleanField(default=False)  # held for the recipient's next digest mail
    status = models.CharField(max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING)
    attempts = models.IntegerField(default=0)
    next_attempt_at = models.DateTimeField()
    claimed_until = models.DateTimeField(null=True, blank=True)  # a process is sending it until then
    last_error = models.TextField(blank=True)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["status", "next_attempt_at"], name="wfapp_delivery_due")]

    def __str__(self) -> str:
        return f"{self.notice.key} by {self.channel} to {self.target} ({self.status})"


class DeliveryAttempt(models.Model):
    """One try of a delivery: when, whether it went through, what the other side said."""

    delivery = models.ForeignKey(Delivery, on_delete=models.CASCADE, related_name="tries")
    at = models.DateTimeField(auto_now_add=True)
    ok = models.BooleanField()
    response_status = models.IntegerField(null=True, blank=True)
    error = models.TextField(blank=True)

    class Meta:
        ordering = ["at", "id"]


class NotifyPreference(models.Model):
    """How a user wants to be told: one mail per notice, or a digest every ``WFAPP_DIGEST_MINUTES``."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="notify_preference"
    )
    digest = models.BooleanField(
        default=False, help_text="One mail every WFAPP_DIGEST_MINUTES instead of one per notice."
    )

    def __str__(self) -> str:
        return f"{self.user}: {'digest' if self.digest else 'each notice'}"


class AnswerLink(models.Model):
    """A signed answer link handed out (``wfapp.runs.answer_links``): one question, one recipient, one use."""

    nonce = models.CharField(max_length=64, unique=True)
    interrupt = models.ForeignKey("wfapp.Interrupt", on_delete=models.CASCADE, related_name="answer_links")
    recipient = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"link for {self.recipient} to question {self.interrupt_id}"
