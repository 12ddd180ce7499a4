"""Errors as RFC 9457 problem documents (``application/problem+json``) with stable types.

Every refusal the API gives is a ``Problem``: a stable ``type`` (a path under
``/api/v1/problems/``, documented there), the HTTP status, a ``title`` that never changes for
the type, a ``detail`` saying what was wrong this time, and members of the type's own
(``errors`` for field errors, ``answered_by``/``answered_at`` for an answer that lost).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from django.http import HttpRequest, HttpResponse

MEDIA_TYPE = "application/problem+json"
TYPE_BASE = "/api/v1/problems/"


@dataclass(frozen=True, slots=True)
class ProblemType:
    slug: str
    status: int
    title: str
    description: str


_TYPES = [
    ProblemType("malformed-json", 400, "Malformed JSON", "The request body is not valid JSON."),
    ProblemType("bad-cursor", 400, "Bad cursor", "The `after` cursor is not one this API gave out."),
    ProblemType(
        "bad-request", 400, "Bad request", "The request cannot be understood as sent (see `detail`)."
    ),
    ProblemType(
        "unauthenticated",
        401,
        "Authentication required",
        "Send `Authorization: Bearer <token>` with a personal API token, or use a logged-in browser session.",
    ),
    ProblemType(
        "invalid-token", 401, "Invalid API token", "The bearer token is unknown, malformed or revoked."
    ),
    ProblemType(
        "csrf-failed",
        403,
        "CSRF check failed",
        "A browser session changing something must send the `X-CSRFToken` header (the `csrftoken` cookie).",
    ),
    ProblemType("forbidden", 403, "Not permitted", "Your account lacks the permission this action needs."),
    ProblemType(
        "token-scope",
        403,
        "Outside the token's scope",
        "The API token is read-only (or limited to other workflows): it may not do this.",
    ),
    ProblemType("not-found", 404, "Not found", "No such resource, or not one you may see."),
    ProblemType(
        "method-not-allowed", 405, "Method not allowed", "This resource does not accept that HTTP method."
    ),
    ProblemType(
        "already-answered",
        409,
        "Already answered",
        "Someone answered this question first; `answered_by` and `answered_at` say who and when.",
    ),
    ProblemType(
        "asking-closed",
        409,
        "No longer the question asked",
        "The question you answered no longer waits for an answer: it was asked again (a newer "
        "question, `superseded_by`), withdrawn, or it shows something else than the `digest` you sent. "
        "Nothing was recorded; read the question again.",
    ),
    ProblemType(
        "run-state", 409, "Not possible in the run's state", "The run's status does not allow this action."
    ),
    ProblemType(
        "claimed",
        409,
        "Claimed by someone else",
        "Another person holds this question (`claimed_by`); it can be claimed once they release it.",
    ),
    ProblemType(
        "decision-refused",
        409,
        "Not possible for this question",
        "The question does not allow this claim, release or reassignment (see `detail`).",
    ),
    ProblemType(
        "idempotency-key-in-use",
        409,
        "Idempotency key in use",
        "A request with this `Idempotency-Key` is still being handled; retry shortly.",
    ),
    ProblemType(
        "payload-too-large", 413, "Payload too large", "The request body is over the size limit (`limit`)."
    ),
    ProblemType(
        "unsupported-media-type",
        415,
        "Unsupported media type",
        "Send the body as `Content-Type: application/json`.",
    ),
    ProblemType(
        "validation",
        422,
        "Invalid request",
        "Fields of the request fail their schema; `errors` lists each as `{field, message}`.",
    ),
    ProblemType(
        "idempotency-key-reused",
        422,
        "Idempotency key reused",
        "This `Idempotency-Key` was already used with a different request.",
    ),
    ProblemType(
        "too-many-streams",
        429,
        "Too many streams",
        "You hold as many open streams as one user may (`WFAPP_MAX_STREAMS_PER_USER`): close one first.",
    ),
    ProblemType("internal", 500, "Internal error", "Something failed on our side; nothing was changed."),
]
TYPES: dict[str, ProblemType] = {t.slug: t for t in _TYPES}


def type_uri(slug: str) -> str:
    return TYPE_BASE + slug


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return iso(value)
    return value


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with a ``Z``, as every timestamp of the API."""
    text = moment.astimezone(UTC).isoformat()
    return text.removesuffix("+00:00") + "Z"


class Problem(Exception):
    """An error the API answers with a problem document; nothing was written."""

    def __init__(
        self, slug: str, detail: str, *, headers: Mapping[str, str] | None = None, **members: Any
    ) -> None:
        self.type = TYPES[slug]
        self.detail = detail
        self.headers = dict(headers or {})
        if self.type.status == 401:  # RFC 9110: a 401 says how to authenticate
            self.headers.setdefault("WWW-Authenticate", 'Bearer realm="wfapp"')
        self.members = {key: _jsonable(value) for key, value in members.items()}
        super().__init__(detail)

    @property
    def status(self) -> int:
        return self.type.status

    def document(self, instance: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": type_uri(self.type.slug),
            "title": self.type.title,
            "status": self.type.status,
            "detail": self.detail,
        }
        if instance:
            body["instance"] = instance
        body.update(self.members)
        return body

    def response(self, request: HttpRequest | None = None) -> HttpResponse:
        instance = request.path if request is not None else None
        response = HttpResponse(
            json.dumps(self.document(instance)), status=self.status, content_type=MEDIA_TYPE
        )
        for name, value in self.headers.items():
            response[name] = value
        return response


def field_errors(errors: Mapping[str, Iterable[str]], prefix: str) -> list[dict[str, str]]:
    """``{field: [messages]}`` (the actions' shape) as the problem's ``errors`` list."""
    items: list[dict[str, str]] = []
    for field, messages in errors.items():
        name = f"{prefix}.{field}" if field else prefix
        items.extend({"field": name, "message": str(message)} for message in messages)
    return items


def invalid(errors: list[dict[str, str]], what: str = "request") -> Problem:
    fields = ", ".join(dict.fromkeys(e["field"] for e in errors)) or what
    return Problem("validation", f"The {what} is invalid: check {fields}.", errors=errors)
