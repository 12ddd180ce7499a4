"""Map every exception an API view can meet to its problem document.

The actions' caller errors (``ValueError`` subclasses that changed nothing) become 4xx
problems here, once, so the routers only call actions and return what they read.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest, HttpResponse
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, ValidationError

from engine import limits
from engine.errors import (
    DecisionError,
    InterruptAlreadyAnswered,
    InterruptClaimedError,
    InvalidAnswerError,
    NotFailedNodeError,
    SessionStateError,
    UnknownInterruptError,
    UnknownSessionError,
    ValueLimitError,
)
from wfapp.api.problems import Problem, field_errors, invalid, iso
from wfapp.api.requests import too_large
from wfapp.errors import (
    ClaimHeldError,
    CommentError,
    InputValidationError,
    MalformedJSONError,
    NotAssignedError,
    NotPermitted,
    PayloadTooLargeError,
    QuestionClosedError,
    RejectionReasonError,
    RunStateError,
    UnknownRunError,
    UnknownWorkflowError,
)

logger = logging.getLogger(__name__)


def _location(loc: Any) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in ("body", "query", "path", "header"):
        source = parts.pop(0)
        if source == "body" and parts:
            parts.pop(0)  # the view's parameter name, not part of the document sent
    return ".".join(parts) or "body"


def refused_value(exc: ValueLimitError, field: str) -> Problem:
    """The 422 for a value of the body's ``field`` that the log cannot keep (where in it, too)."""
    where = f"{field}.{exc.field}" if exc.field else field
    return invalid([{"field": where, "message": limits.safe_text(str(exc))}])


def problem_for(exc: Exception) -> Problem | None:
    """The problem a known exception stands for (None: not a refusal, a bug)."""
    if isinstance(exc, Problem):
        return exc
    if isinstance(exc, HttpError) and isinstance(exc.__cause__, Problem):
        return exc.__cause__  # raised by our body parser, wrapped by django-ninja
    match exc:
        case ValidationError():
            errors = [
                {"field": _location(e.get("loc", ())), "message": str(e.get("msg"))} for e in exc.errors
            ]
            return invalid(errors)
        case AuthenticationError():
            return Problem(
                "unauthenticated",
                "Authentication required: send 'Authorization: Bearer <token>' or log in.",
                headers={"WWW-Authenticate": 'Bearer realm="wfapp"'},
            )
        case HttpError() if exc.status_code == 400:
            return Problem("malformed-json", f"The request body could not be parsed: {exc}.")
        case HttpError() if exc.status_code == 403:
            return Problem("forbidden", str(exc))
        case RequestDataTooBig():
            return too_large(None)
        case PayloadTooLargeError():
            return Problem("payload-too-large", str(exc), limit=exc.limit)
        case MalformedJSONError():
            return Problem("malformed-json", str(exc))
        case InputValidationError():
            return invalid(field_errors(exc.field_errors, "input"), "input")
        case ValueLimitError():  # too deep, too large or not storable: the log could not keep it
            return invalid([{"field": exc.field or "body", "message": limits.safe_text(str(exc))}])
        case NotFailedNodeError():
            return invalid([{"field": "node", "message": str(exc)}])
        case InvalidAnswerError():
            return invalid(field_errors(exc.field_errors, "answer"), "answer")
        case CommentError():
            return invalid([{"field": exc.field, "message": str(exc)}])
        case RejectionReasonError():
            return invalid([{"field": "reason", "message": str(exc)}])
        case InterruptAlreadyAnswered():
            who = exc.answered_by or "someone else"
            when = f" at {iso(exc.answered_at)}" if isinstance(exc.answered_at, datetime) else ""
            return Problem(
                "already-answered",
                f"Already answered by {who}{when}; this answer was not recorded.",
                answered_by=exc.answered_by,
                answered_at=exc.answered_at,
            )
        case InterruptClaimedError():
            return Problem("claimed", str(exc), claimed_by=exc.holder)
        case ClaimHeldError():
            detail = f"{exc} Send override_claim: true to answer over the claim."
            return Problem("claimed", detail, claimed_by=exc.holder)
        case DecisionError() | QuestionClosedError():
            return Problem("decision-refused", str(exc))
        case RunStateError() | SessionStateError():
            return Problem("run-state", str(exc))
        case UnknownWorkflowError() | UnknownRunError() | UnknownSessionError() | UnknownInterruptError():
            return Problem("not-found", str(exc))
        case NotAssignedError():
            return Problem("forbidden", str(exc))
        case NotPermitted():
            return Problem("forbidden", f"{exc}: ask an administrator for the permission.")
        case Http404():
            return Problem("not-found", str(exc) or "Not found.")
    return None


def install(api: NinjaAPI) -> None:
    """Make ``api`` answer every refusal with a problem document."""

    def handle(request: HttpRequest, exc: Any) -> HttpResponse:
        problem = problem_for(exc)
        if problem is None:  # a bug, not a refusal: say so, and log it for us
            logger.error("API request %s %s failed", request.method, request.path, exc_info=exc)
            problem = Problem("internal", "Something failed on our side; the error was logged.")
        return problem.response(request)

    for kind in (Exception, Http404, HttpError, ValidationError, AuthenticationError):
        api.add_exception_handler(kind, handle)
