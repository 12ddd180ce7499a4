"""Responses the routers share: validated JSON documents, ETags, the problem responses' schema."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseNotModified
from ninja import Schema

from wfapp.api.problems import MEDIA_TYPE
from wfapp.api.schemas import ProblemDocument


def document(schema: type[Schema], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` checked against ``schema``, as plain JSON data."""
    return schema.model_validate(data).model_dump(mode="json")


def with_etag(request: HttpRequest, body: dict[str, Any]) -> HttpResponse:
    """200 with a strong ETag of the document, or 304 when the client has that version."""
    content = json.dumps(body).encode()
    tag = '"' + hashlib.sha256(content).hexdigest()[:32] + '"'
    wanted = {t.strip() for t in request.headers.get("If-None-Match", "").split(",")}
    if tag in wanted or "*" in wanted:
        response: HttpResponse = HttpResponseNotModified()
    else:
        response = HttpResponse(content, content_type="application/json")
    response["ETag"] = tag
    response["Cache-Control"] = "private, no-cache"
    response["Vary"] = "Authorization, Cookie"
    return response


def problems(*statuses: int) -> dict[int, Any]:
    """The ``response=`` entries of these problem statuses, for the OpenAPI document."""
    return dict.fromkeys(statuses, ProblemDocument)


PROBLEM_CONTENT = {MEDIA_TYPE: {"schema": {"$ref": "#/components/schemas/ProblemDocument"}}}
