"""``Idempotency-Key``: the same key (per user) returns the first result, never a second run.

The key is reserved by inserting its row (a unique constraint on user and key), so of two
concurrent requests exactly one does the work; the other waits for that result and returns it.
Only successes are kept: after a refusal the key is free again, so a corrected retry works.
A key sent again with a different request is refused (``idempotency-key-reused``).
Records are kept ``WFAPP_IDEMPOTENCY_HOURS`` (24): the runtime's maintenance (embedded) and the
scaled mode's sweep call ``wfapp.store.idempotency.purge_expired``; a key sent again after that starts afresh.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from asgiref.sync import sync_to_async
from django.db import IntegrityError, transaction
from django.http import HttpRequest, HttpResponse

from wfapp.api.problems import Problem
from wfapp.models import IdempotencyRecord

HEADER = "Idempotency-Key"
KEY_LIMIT = 200
WAIT_FOR_FIRST = 10.0  # seconds a retry waits for the first request with its key to finish


@dataclass(frozen=True, slots=True)
class Outcome:
    """A result worth replaying: status, JSON document, and the ``Location`` if any."""

    status: int
    document: dict[str, Any]
    location: str = ""


def respond(status: int, body: str, location: str = "", *, replayed: bool = False) -> HttpResponse:
    response = HttpResponse(body, status=status, content_type="application/json")
    if location:
        response["Location"] = location
    if replayed:
        response["Idempotent-Replayed"] = "true"
    return response


def _fingerprint(request: HttpRequest) -> str:
    digest = hashlib.sha256(f"{request.method} {request.path}\n".encode())
    digest.update(request.body)
    return digest.hexdigest()


def _reserve(user: Any, key: str, fingerprint: str) -> IdempotencyRecord | None:
    """None when this request reserved the key; else the existing record."""
    try:
        with transaction.atomic():
            IdempotencyRecord.objects.create(user=user, key=key, fingerprint=fingerprint)
        return None
    except IntegrityError:
        return IdempotencyRecord.objects.get(user=user, key=key)


def _store(user: Any, key: str, status: int, body: str, location: str) -> None:
    IdempotencyRecord.objects.filter(user=user, key=key).update(
        status_code=status, response=body, location=location
    )


def _release(user: Any, key: str) -> None:
    IdempotencyRecord.objects.filter(user=user, key=key, status_code__isnull=True).delete()


def _finished(user: Any, key: str) -> IdempotencyRecord | None:
    return IdempotencyRecord.objects.filter(user=user, key=key).first()


def _key(request: HttpRequest) -> str | None:
    key = request.headers.get(HEADER)
    if key is None:
        return None
    if not key or len(key) > KEY_LIMIT or not key.isascii() or not key.isprintable():
        raise Problem(
            "bad-request",
            f"The {HEADER} header must be 1 to {KEY_LIMIT} printable ASCII characters (a UUID, say).",
        )
    return key


async def once(request: HttpRequest, user: Any, act: Callable[[], Awaitable[Outcome]]) -> HttpResponse:
    """Do ``act`` once per ``Idempotency-Key`` (every time when the request has none)."""
    key = _key(request)
    if key is None:
        outcome = await act()
        return respond(outcome.status, json.dumps(outcome.document), outcome.location)
    fingerprint = _fingerprint(request)
    existing = await sync_to_async(_reserve)(user, key, fingerprint)
    if existing is None:
        try:
            outcome = await act()
        except BaseException:
            await sync_to_async(_release)(user, key)
            raise
        body = json.dumps(outcome.document)
        await sync_to_async(_store)(user, key, outcome.status, body, outcome.location)
        return respond(outcome.status, body, outcome.location)
    if existing.fingerprint != fingerprint:
        raise Problem(
            "idempotency-key-reused",
            f"This {HEADER} was already used with a different request; use a new key for a new request.",
        )
    return await _replay(user, key, existing)


async def _replay(user: Any, key: str, record: IdempotencyRecord | None) -> HttpResponse:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT_FOR_FIRST
    while record is not None and record.status_code is None and loop.time() < deadline:
        await asyncio.sleep(0.05)
        record = await sync_to_async(_finished)(user, key)
    if record is None:  # the first request was refused: its key is free, so this one is too
        raise Problem(
            "idempotency-key-in-use",
            f"The first request with this {HEADER} was refused meanwhile; send this one again.",
        )
    if record.status_code is None:
        raise Problem("idempotency-key-in-use", f"A request with this {HEADER} is still being handled.")
    return respond(record.status_code, record.response, record.location, replayed=True)


PARAMETER = {
    "name": HEADER,
    "in": "header",
    "required": False,
    "description": "Any unique string (a UUID): a retry with the same key returns the first result.",
    "schema": {"type": "string", "minLength": 1, "maxLength": KEY_LIMIT},
}
