"""Send the deliveries that are due: mails through Django's email framework, webhooks as signed JSON.

Each delivery (or a recipient's digest batch) is claimed just before it is sent (a conditional
update, so two processes never send one at the same time), sent, and its try recorded
(``DeliveryAttempt``). A claim covers one send, never a whole pass: it lasts longer than a send
may take, so it cannot expire while later deliveries of the pass wait their turn. A failure is
tried again after ``WFAPP_NOTIFY_BACKOFF_SECONDS`` × 1, 2, 4, ... until ``WFAPP_NOTIFY_ATTEMPTS``
tries, then the delivery is ``failed`` (visible in the admin with every try's error). A
permanent error (a mail that cannot be built, a refused recipient, a webhook answering with a
redirect or no longer configured) fails it at once: trying again would fail the same way.
Deliveries held for a digest go out together, one mail per recipient, when their digest time
comes. Subjects are one line (``subject_line``): workflow data cannot break a mail header.

A webhook receives ``POST`` with the notice's JSON payload and the headers
``X-Wfapp-Event``, ``X-Wfapp-Delivery``, ``X-Wfapp-Timestamp`` and
``X-Wfapp-Signature: sha256=<hex>``, the HMAC-SHA256 of ``<timestamp>.<body>`` with the URL's
own secret (``WFAPP_WEBHOOK_SECRETS``) or else ``WFAPP_WEBHOOK_SECRET``; any 2xx answer counts
as delivered. Redirects are not followed: the signed request goes to the configured URL only.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import smtplib
import time
import unicodedata
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.core.mail import send_mail
from django.db.models import Q
from django.utils import timezone

from wfapp.models import Channel, Delivery, DeliveryAttempt, DeliveryStatus, NoticeKind
from wfapp.runs import answer_links

logger = logging.getLogger(__name__)

BATCH = 100  # deliveries one pass sends at most
SUBJECT_LENGTH = 120  # characters of a mail subject (RFC 5322 advises lines of at most 78 bytes)


class DeliveryFailed(Exception):
    """A try that did not go through; ``status`` is the HTTP status when there was one, and a
    ``permanent`` failure is not tried again."""

    def __init__(self, message: str, status: int | None = None, *, permanent: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.permanent = permanent


def sign(secret: str, timestamp: str, body: bytes) -> str:
    """The ``X-Wfapp-Signature`` value of ``body`` sent at ``timestamp``."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def subject_line(text: str) -> str:
    """``text`` as one mail subject: control, format and line or paragraph separator characters
    become spaces, runs of whitespace one space, and a long one is cut with an ellipsis."""
    spaced = "".join(" " if unicodedata.category(char)[0] in "CZ" else char for char in text)
    line = " ".join(spaced.split())
    if len(line) <= SUBJECT_LENGTH:
        return line
    return line[: SUBJECT_LENGTH - 1].rstrip() + "…"


def claim_length() -> timedelta:
    """How long one claim holds: longer than one send may take (its timeouts), with room to spare."""
    mailers: Any = settings.MAILERS
    smtp = float(mailers.get("default", {}).get("OPTIONS", {}).get("timeout") or 10)
    return timedelta(seconds=max(60.0, 3 * max(smtp, float(settings.WFAPP_WEBHOOK_TIMEOUT))))


def _claim(pks: list[int], now: datetime) -> list[int]:
    """The deliveries among ``pks`` this process now holds (nobody else is sending them)."""
    held = []
    free = Q(claimed_until__isnull=True) | Q(claimed_until__lt=now)
    for pk in pks:
        if Delivery.objects.filter(free, pk=pk, status=DeliveryStatus.PENDING).update(
            claimed_until=now + claim_length()
        ):
            held.append(pk)
    return held


def send_due(now: datetime | None = None) -> int:
    """Send what is due now; how many deliveries were tried."""
    start = now or timezone.now()
    due = Delivery.objects.filter(status=DeliveryStatus.PENDING, next_attempt_at__lte=start).filter(
        Q(claimed_until__isnull=True) | Q(claimed_until__lt=start)
    )
    rows = list(due.order_by("next_attempt_at", "id").values_list("pk", "digest", "recipient_id")[:BATCH])
    singles: list[list[int]] = []
    digests: dict[int, list[int]] = {}
    for pk, digest, recipient_id in rows:
        if digest and recipient_id is not None:
            digests.setdefault(recipient_id, []).append(pk)
        else:
            singles.append([pk])
    tried = 0
    for pks, send in [*((s, _send_single) for s in singles), *((d, _send_digest) for d in digests.values())]:
        # Claimed when its turn comes, not when the pass began: earlier sends take no claim's time.
        held = list(
            Delivery.objects.filter(pk__in=_claim(pks, now or timezone.now()))
            .select_related("notice", "recipient")
            .order_by("id")
        )
        if held:
            _try(held, lambda b=held, send=send: send(b))  # type: ignore[misc]
            tried += len(held)
    return tried


def _permanent(error: Exception) -> bool:
    """Whether trying again cannot help: the message cannot be built (a header refused) or
    every recipient was refused."""
    return isinstance(error, (ValueError, smtplib.SMTPRecipientsRefused))


def _try(deliveries: list[Delivery], send: Callable[[], int | None]) -> None:
    """Send, then record the try on every delivery it covered."""
    status: int | None = None
    permanent = False
    try:
        status = send()
        error = ""
    except DeliveryFailed as failed:
        status, error, permanent = failed.status, str(failed), failed.permanent
    except Exception as failed:
        error, permanent = f"{type(failed).__name__}: {failed}", _permanent(failed)
    now = timezone.now()
    for delivery in deliveries:
        _record(delivery, now, status, error, permanent)


def _record(delivery: Delivery, now: datetime, status: int | None, error: str, permanent: bool) -> None:
    DeliveryAttempt.objects.create(
        delivery=delivery, ok=not error, response_status=status, error=error[:2000]
    )
    delivery.attempts += 1
    delivery.claimed_until = None
    if not error:
        delivery.status, delivery.sent_at, delivery.last_error = DeliveryStatus.SENT, now, ""
    else:
        delivery.last_error = error[:2000]
        if permanent or delivery.attempts >= int(settings.WFAPP_NOTIFY_ATTEMPTS):
            delivery.status = DeliveryStatus.FAILED
            how = "a permanent error" if permanent else f"{delivery.attempts} tries"
            logger.warning("gave up on delivery %s after %s: %s", delivery.pk, how, error)
        else:
            wait = float(settings.WFAPP_NOTIFY_BACKOFF_SECONDS) * 2 ** (delivery.attempts - 1)
            delivery.next_attempt_at = now + timedelta(seconds=min(wait, 3600.0))
    delivery.save(
        update_fields=["attempts", "claimed_until", "status", "sent_at", "last_error", "next_attempt_at"]
    )


def _send_single(batch: list[Delivery]) -> int | None:
    [delivery] = batch
    if delivery.channel == Channel.WEBHOOK:
        return _post_webhook(delivery)
    subject, body = _mail(delivery)
    send_mail(subject, body, None, [delivery.target])
    return None


def _send_digest(batch: list[Delivery]) -> None:
    parts = [_mail(delivery) for delivery in batch]
    subject = f"[wfapp] {len(batch)} notifications"
    body = "\n\n---\n\n".join(f"{line}\n\n{text}" for line, text in parts)
    send_mail(subject, body, None, [batch[0].target])


def _mail(delivery: Delivery) -> tuple[str, str]:
    """A notice's subject and text for its recipient (with an answer link when they are on)."""
    notice = delivery.notice
    data = notice.payload
    run = data.get("run", {})
    about = f" ({run['summary']})" if run.get("summary") else ""
    if notice.kind == NoticeKind.FAILED:
        error = (data.get("error") or {}).get("message", "")
        return (
            subject_line(f"[wfapp] Run of {data.get('workflow')}{about} failed"),
            f"The run {run.get('id')}{about} of {data.get('workflow')} failed:\n{error}\n\n{run.get('url')}",
        )
    if notice.kind == NoticeKind.MENTIONED:
        said = data.get("comment") or {}
        where = (data.get("question") or {}).get("url") or run.get("url")
        return (
            subject_line(f"[wfapp] {said.get('author') or 'Someone'} mentioned you: {said.get('text', '')}"),
            f"{said.get('author') or 'Someone'} mentioned you in a comment on a run of "
            f"{data.get('workflow')}:\n\n{said.get('text', '')}\n\n{where}",
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
        f"A question of {data.get('workflow')}{about} {what_happened}:",
        "",
        str(question.get("message", "")),
        "",
        f"Answer it in the dashboard: {question.get('url')}",
    ]
    if notice.interrupt_id is not None and delivery.recipient is not None:
        url = answer_links.issue(notice.interrupt_id, delivery.recipient)
        if url is not None:
            lines.append(f"Or without logging in (this link works once): {url}")
    return subject_line(f"[wfapp] Waiting: {question.get('message', '')}"), "\n".join(lines)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """Refuse every redirect: the signed headers never go to another address."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises the 3xx as an HTTPError


_opener = urllib.request.build_opener(_NoRedirects)


def webhook_secret(url: str) -> str:
    """The secret ``url``'s requests are signed with: its own, else the shared one."""
    return str(dict(settings.WFAPP_WEBHOOK_SECRETS).get(url) or settings.WFAPP_WEBHOOK_SECRET)


def _post_webhook(delivery: Delivery) -> int:
    if delivery.target not in settings.WFAPP_WEBHOOK_URLS:
        raise DeliveryFailed(f"{delivery.target} is no longer one of WFAPP_WEBHOOK_URLS", permanent=True)
    secret = webhook_secret(delivery.target)
    if not secret:
        raise DeliveryFailed("no webhook secret is set for this URL: webhooks are not sent unsigned")
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
        with _opener.open(request, timeout=float(settings.WFAPP_WEBHOOK_TIMEOUT)) as response:
            return int(response.status)
    except urllib.error.HTTPError as refused:
        if 300 <= refused.code < 400:
            where = refused.headers.get("Location", "elsewhere")
            message = f"HTTP {refused.code} from {delivery.target}: redirects to {where} are not followed"
            raise DeliveryFailed(message, refused.code, permanent=True) from None
        raise DeliveryFailed(f"HTTP {refused.code} from {delivery.target}", refused.code) from None
    except (urllib.error.URLError, OSError) as failed:
        raise DeliveryFailed(f"{delivery.target} unreachable: {failed}") from None
