"""Send the deliveries that are due: mails through Django's email framework, webhooks as signed JSON.

A delivery is claimed first (a conditional update, so two processes never send one twice at
the same time), sent, and its try recorded (``DeliveryAttempt``). A failure is tried again
after ``WFAPP_NOTIFY_BACKOFF_SECONDS`` × 1, 2, 4, ... until ``WFAPP_NOTIFY_ATTEMPTS`` tries,
then the delivery is ``failed`` (visible in the admin with every try's error). Deliveries held
for a digest go out together, one mail per recipient, when their digest time comes.

A webhook receives ``POST`` with the notice's JSON payload and the headers
``X-Wfapp-Event``, ``X-Wfapp-Delivery``, ``X-Wfapp-Timestamp`` and
``X-Wfapp-Signature: sha256=<hex>``, the HMAC-SHA256 with ``WFAPP_WEBHOOK_SECRET`` of
``<timestamp>.<body>``; any 2xx answer counts as delivered.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
import urllib.error
import urllib.request
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import Q
from django.utils import timezone

from wfapp import answer_links

from .models import Channel, Delivery, DeliveryAttempt, DeliveryStatus, NoticeKind

logger = logging.getLogger(__name__)

CLAIM = timedelta(seconds=60)  # a claimed delivery is left to its sender this long
BATCH = 100  # deliveries one pass sends at most


class DeliveryFailed(Exception):
    """A try that did not go through; ``status`` is the HTTP status when there was one."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Wfapp-Signature`` value of ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def _claim(pks: list[int], now: datetime) -> list[int]:
    """The deliveries among ``pks`` this process now holds (nobody else is sending them)."""
    held = []
    free = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    for pk in pks:
        if Delivery.objects.filter(free, pk=pk, status=DeliveryStatus.PENDING).update(
            claimed_until=now + CLAIM
        ):
            held.append(pk)
    return held


def send_due(now: datetime | None = None) -> int:
    """Send what is due now; how many deliveries were tried."""
    now = now or timezone.now()
    due = Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=now).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    )
    pks = list(due.order_by("next_attempt_at", "id").values_list("pk", flat=True)[:BATCH])
    held = Delivery.objects.filter(pk__in=_claim(pks, now)).select_related("notice", "recipient")
    singles: list[Delivery] = []
    digests: dict[int, list[Delivery]] = {}
    for delivery in held.order_by("id"):
        if delivery.digest and delivery.recipient_id is not None:
            digests.setdefault(delivery.recipient_id, []).append(delivery)
        else:
            singles.append(delivery)
    for delivery in singles:
        _try([delivery], lambda d=delivery: _send_one(d))
    for batch in digests.values():
        _try(batch, lambda b=batch: _send_digest(b))
    return len(singles) + sum(len(batch) for batch in digests.values())


def _try(deliveries: list[Delivery], send: Any) -> None:
    """Send, then record the try on every delivery it covered."""
    status: int | None = None
    try:
        status = send()
        error = ""
    except DeliveryFailed as failed:
        status, error = failed.status, str(failed)
    except Exception as failed:
        error = f"{type(failed).__name__}: {failed}"
    now = timezone.now()
    for delivery in deliveries:
        _record(delivery, now, status, error)


def _record(delivery: Delivery, now: datetime, status: int | None, error: str) -> None:
    DeliveryAttempt.objects.create(
        delivery=delivery, ok=not error, response_status=status, error=error[:2000]
    )
    delivery.attempts += 1
    delivery.claimed_until = None
    if not error:
        delivery.status, delivery.sent_at, delivery.last_error = DeliveryStatus.SENT, now, ""
    else:
        delivery.last_error = error[:2000]
        if delivery.attempts >= int(settings.WFAPP_NOTIFY_ATTEMPTS):
            delivery.status = DeliveryStatus.FAILED
            logger.warning("gave up on delivery %s after %d tries: %s", delivery.pk, delivery.attempts, error)
        else:
            wait = float(settings.WFAPP_NOTIFY_BACKOFF_SECONDS) * 2 ** (delivery.attempts - 1)
            delivery.next_attempt_at = now + timedelta(seconds=min(wait, 3600.0))
    delivery.save(
        update_fields=["attempts", "claimed_until", "status", "sent_at", "last_error", "next_attempt_at"]
    )


def _send_one(delivery: Delivery) -> int | None:
    if delivery.channel == Channel.WEBHOOK:
        return _post_webhook(delivery)
    subject, body = _mail(delivery)
    send_mail(subject, body, None, [delivery.target])
    return None


def _send_digest(batch: list[Delivery]) -> None:
    parts = [_mail(delivery) for delivery in batch]
    subject = f"[wfapp] {len(batch)} notifications"
    body = "\n\n---\n\n".join(f"{subject_line}\n\n{text}" for subject_line, text in parts)
    send_mail(subject, body, None, [batch[0].target])


def _mail(delivery: Delivery) -> tuple[str, str]:
    """A notice's subject and text for its recipient (with an answer link when they are on)."""
    notice = delivery.notice
    data = notice.payload
    run = data.get("run", {})
    if notice.kind == NoticeKind.FAILED:
        error = (data.get("error") or {}).get("message", "")
        return (
            f"[wfapp] Run of {data.get('workflow')} failed",
            f"The run {run.get('id')} of {data.get('workflow')} failed:\n{error}\n\n{run.get('url')}",
        )
    question = data.get("question", {})
    what: dict[str, str] = {
        NoticeKind.QUESTION: "waits for an answer",
        NoticeKind.ASSIGNED: "is assigned to you",
        NoticeKind.ESCALATED: "was escalated to you",
        NoticeKind.OVERDUE: "is about to be overdue",
    }
    what_happened = what.get(notice.kind, "waits for an answer")
    lines = [
        f"A question of {data.get('workflow')} {what_happened}:",
        "",
        str(question.get("message", "")),
        "",
        f"Answer it in the dashboard: {question.get('url')}",
    ]
    if notice.interrupt_id is not None and delivery.recipient is not None:
        url = answer_links.issue(notice.interrupt_id, delivery.recipient)
        if url is not None:
            lines.append(f"Or without logging in (this link works once): {url}")
    return f"[wfapp] Waiting: {str(question.get('message', ''))[:60]}", "\n".join(lines)


def _post_webhook(delivery: Delivery) -> int:
    secret = str(settings.WFAPP_WEBHOOK_SECRET)
    if not secret:
        raise DeliveryFailed("WFAPP_WEBHOOK_SECRET is not set: webhooks are not sent unsigned")
    if delivery.target not in settings.WFAPP_WEBHOOK_URLS:
        raise DeliveryFailed(f"{delivery.target} is no longer one of WFAPP_WEBHOOK_URLS")
    body = json.dumps({**delivery.notice.payload, "delivery": delivery.pk}, sort_keys=True).encode()
    timestamp = str(int(time.time()))
    request = urllib.request.Request(
        delivery.target,
        data=body,
        method="POST",
        headers={
            "Content-Type": "application/json",
            "User-Agent": "wfapp-webhook",
            "X-Wfapp-Event": delivery.notice.kind,
            "X-Wfapp-Delivery": str(delivery.pk),
            "X-Wfapp-Timestamp": timestamp,
            "X-Wfapp-Signature": sign(secret, timestamp, body),
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=float(settings.WFAPP_WEBHOOK_TIMEOUT)) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        raise DeliveryFailed(f"HTTP {refused.code} from {delivery.target}", refused.code) from None
    except (urllib.error.URLError, OSError) as failed:
        raise DeliveryFailed(f"{delivery.target} unreachable: {failed}") from None
