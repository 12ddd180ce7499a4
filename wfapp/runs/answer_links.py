"""Signed answer links: one question, one recipient, one use, an expiry; off unless enabled.

A link is ``/answer-link/<token>/``, the token signed with Django's signing (the secret key,
salt ``wfapp.answer-link``, ``WFAPP_ANSWER_LINK_HOURS``) over a random nonce, the question and
the recipient; the nonce's ``AnswerLink`` row records its expiry and when it was used. Opening
it (GET) only shows the question, so a link-preview bot never answers; a POST answers as the
recipient through ``answering.answer_interrupt`` (their permissions apply) and uses the link up.
A used, expired, tampered or withdrawn link raises ``LinkRefused`` with a sentence to show,
and nothing is answered; so does a link whose recipient may no longer answer the question
(access taken away, the question assigned or claimed elsewhere): it stops showing it at once. With ``WFAPP_ANSWER_LINKS`` off no link is issued and none opens.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core import signing
from django.urls import reverse
from django.utils import timezone

from engine.errors import InvalidAnswerError, ValueLimitError
from wfapp.errors import RejectionReasonError, RunFailedError
from wfapp.human import audit
from wfapp.human.permissions import answer_refusal, can_answer
from wfapp.models import AnswerLink, InterruptStatus, RunStatus
from wfapp.runs import answering
from wfapp.runs.failures import failed_node

SALT = "wfapp.answer-link"


class LinkRefused(ValueError):
    """A link that answers nothing, and why (shown on its page)."""


def enabled() -> bool:
    return bool(settings.WFAPP_ANSWER_LINKS)


def _lifetime() -> timedelta:
    return timedelta(hours=float(settings.WFAPP_ANSWER_LINK_HOURS))


def issue(interrupt_pk: int, recipient: Any) -> str | None:
    """A new link for ``recipient`` to answer the question ``interrupt_pk`` (None when off)."""
    if not enabled():
        return None
    nonce = secrets.token_urlsafe(18)
    AnswerLink.objects.create(
        nonce=nonce, interrupt_id=interrupt_pk, recipient=recipient, expires_at=timezone.now() + _lifetime()
    )
    token = signing.dumps({"n": nonce, "i": interrupt_pk, "u": recipient.pk}, salt=SALT)
    return f"{settings.WFAPP_BASE_URL}{reverse('answer-link', args=[token])}"


def open_link(token: str) -> AnswerLink:
    """The link's record, with its question and recipient, if it may still answer; else ``LinkRefused``."""
    if not enabled():
        raise LinkRefused("Answer links are turned off on this server.")
    try:
        data = signing.loads(token, salt=SALT, max_age=_lifetime())
    except signing.SignatureExpired:
        raise LinkRefused("This link has expired. Open the question in the dashboard instead.") from None
    except signing.BadSignature:
        raise LinkRefused("This link is not valid: it is incomplete or was changed.") from None
    fields = data if isinstance(data, dict) else {}
    nonce, interrupt_pk, recipient_pk = fields.get("n"), fields.get("i"), fields.get("u")
    if not isinstance(nonce, str) or not isinstance(interrupt_pk, int) or not isinstance(recipient_pk, int):
        raise LinkRefused("This link is not valid: it is incomplete or was changed.")
    link = (
        AnswerLink.objects.select_related("interrupt__session", "recipient")
        .filter(nonce=nonce, interrupt_id=interrupt_pk, recipient_id=recipient_pk)
        .first()
    )
    if link is None:
        raise LinkRefused("This link is not valid: it is incomplete or was changed.")
    if link.used_at is not None:
        raise LinkRefused(f"This link was already used, at {link.used_at:%Y-%m-%d %H:%M} UTC; it works once.")
    if link.expires_at <= timezone.now():
        raise LinkRefused("This link has expired. Open the question in the dashboard instead.")
    if not link.recipient.is_active:
        raise LinkRefused("This link's recipient can no longer answer.")
    row = link.interrupt
    if row.status != InterruptStatus.PENDING:
        by = f" by {row.answered_by}" if row.status == InterruptStatus.ANSWERED and row.answered_by else ""
        raise LinkRefused(f"This question no longer waits for an answer (it was {row.status}{by}).")
    if row.session.status == RunStatus.FAILED:
        raise LinkRefused(f"{RunFailedError(failed_node(row.session_id))}, then answer it in the dashboard.")
    name = link.recipient.get_username()
    if not can_answer(link.recipient, row.workflow):
        raise LinkRefused(f"{name} may no longer answer this question.")
    why = answer_refusal(link.recipient, row)
    if why is not None:
        raise LinkRefused(f"{name} may no longer answer this question: {why}.")
    return link


def _use(link: AnswerLink) -> bool:
    """Mark the link used; False when another request used it first."""
    return bool(AnswerLink.objects.filter(pk=link.pk, used_at__isnull=True).update(used_at=timezone.now()))


def _release(link: AnswerLink) -> None:
    AnswerLink.objects.filter(pk=link.pk).update(used_at=None)


async def answer(token: str, value: Any, reason: str | None = None, digest: str | None = None) -> AnswerLink:
    """Answer the link's question with ``value`` as its recipient, using the link up.

    The answer is bound to the link's question (its asking, and ``digest``: what its page showed),
    never to a later asking of the same interrupt id.

    An answer that does not fit the question's schema (``InvalidAnswerError``,
    ``ValueLimitError``, a rejection without its reason) leaves the link usable to try again;
    any other refusal uses it up.
    """
    link = await sync_to_async(open_link)(token)
    if not await sync_to_async(_use)(link):
        raise LinkRefused("This link was already used; it works once.")
    row = link.interrupt
    try:
        await answering.answer_interrupt(
            row.session_id,
            row.interrupt_id,
            value,
            user=link.recipient,
            reason=reason,
            asking=audit.asking_of(row, digest),
        )
    except (InvalidAnswerError, ValueLimitError, RejectionReasonError):
        await sync_to_async(_release)(link)
        raise
    return link
