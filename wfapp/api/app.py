"""The API object: django-ninja with our auth, JSON-only bodies, problem errors and routers."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import NinjaAPI, Router, Swagger

from wfapp.api import comments, handlers, interrupts, openapi, runs, streams, workflows
from wfapp.api.auth import AUTH
from wfapp.api.problems import TYPES, Problem
from wfapp.api.requests import JSONBodyParser
from wfapp.api.responses import problems
from wfapp.api.schemas import ProblemDocument

DESCRIPTION = """\
Start runs, read them, answer their questions and follow them live: everything the dashboard
does. Authenticate with a personal API token (`Authorization: Bearer <token>`, created on the
API tokens page or with `manage.py wf token create <user>`) or, from the same origin, the
browser session with its CSRF token. Errors are RFC 9457 problem documents
(`application/problem+json`) whose `type` is one of `/api/v1/problems/{slug}`; timestamps are
ISO 8601 in UTC.
"""


class WfappAPI(NinjaAPI):
    """Adds the workflows' input schemas and the problem types to the OpenAPI document."""

    def get_openapi_schema(self, *args: Any, **kwargs: Any) -> Any:
        return openapi.extend(super().get_openapi_schema(*args, **kwargs))


problem_router = Router(tags=["problems"])


@problem_router.get(
    "/{slug}", response={200: ProblemDocument, **problems(401, 404)}, summary="A problem type"
)
async def problem_type(request: HttpRequest, slug: str) -> Any:
    """What a problem `type` means (its status and title)."""
    kind = TYPES.get(slug)
    if kind is None:
        raise Problem("not-found", f"No problem type {slug!r}; known: {', '.join(TYPES)}.")
    return {
        "type": f"/api/v1/problems/{slug}",
        "title": kind.title,
        "status": kind.status,
        "detail": kind.description,
    }


class DocsPage(Swagger):
    """Swagger UI from local files, with a way back to the dashboard and AA colours; "Try it out"
    waits until asked for (a form that sends real requests is not the first thing shown); no deep
    links, which Swagger UI puts as links inside each operation's button (axe: nested-interactive)."""

    template = "wfapp/api_docs.html"


api = WfappAPI(
    title="wfapp API",
    version="1",
    description=DESCRIPTION,
    urls_namespace="api-v1",
    auth=AUTH,
    parser=JSONBodyParser(),
    docs=DocsPage(
        settings={
            "validatorUrl": None,
            "persistAuthorization": True,
            "tryItOutEnabled": False,
            "deepLinking": False,
        }
    ),
    docs_decorator=openapi.docs_access,
)
handlers.install(api)
api.add_router("/workflows", workflows.router)
api.add_router("/runs", streams.runs_router)
api.add_router("/runs", runs.router)
api.add_router("/runs", comments.runs_router)
api.add_router("/interrupts", streams.inbox_router)
api.add_router("/interrupts", interrupts.router)
api.add_router("/interrupts", comments.interrupts_router)
api.add_router("/problems", problem_router)
