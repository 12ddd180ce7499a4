"""The OpenAPI document's additions, and who may read it and its docs page.

Every registered workflow gets its input schema as a component and its own start operation
(`POST /api/v1/workflows/<name>/runs`) whose body references it, so a client generator or a
reader sees exactly what each workflow takes. The answer schemas its code declares
(``wfapp.api.answer_schemas``) become components too, referenced from the answer operation's
body (`anyOf`, with a last branch for questions whose schema only the running code decides) and
listed per workflow in its `x-wfapp-questions`. Problem responses are `application/problem+json`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse

from wfapp.api.answer_schemas import declared_questions
from wfapp.api.auth import TokenAuth
from wfapp.api.problems import MEDIA_TYPE, Problem
from wfapp.registry import all_workflows

START_PATH = "/api/v1/workflows/{name}/runs"
ANSWER_PATH = "/api/v1/interrupts/{question_id}/answer"
OTHER_ANSWERS = {
    "description": "Any other question (its schema is computed when it is asked, or it is asked "
    "by code the document cannot read): its `response_schema` decides."
}
_REF = "#/components/schemas/"


def _component_name(*parts: str) -> str:
    return "_".join("".join(c if c.isalnum() or c in "._-" else "_" for c in part) for part in parts)


def _hoist(schema: dict[str, Any], owner: str, components: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its ``$defs`` moved into ``components`` and its local refs pointed there."""
    schema = dict(schema)
    defs = {**schema.pop("$defs", {}), **schema.pop("definitions", {})}
    names = {name: _component_name(owner, name) for name in defs}

    def pointed(part: Any) -> Any:
        text = json.dumps(part)
        for name, component in names.items():
            for local in (f"#/$defs/{name}", f"#/definitions/{name}"):
                text = text.replace(json.dumps(local), json.dumps(_REF + component))
        return json.loads(text)

    for name, body in defs.items():
        components[names[name]] = pointed(body)
    return dict(pointed(schema))


def _workflow_inputs(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    generic = schema["paths"].get(START_PATH, {}).get("post")
    if generic is None:
        return
    for name, workflow in all_workflows().items():
        component = _component_name("WorkflowInput", name)
        input_schema = workflow.input_json_schema or {}
        components[component] = _hoist(input_schema, name, components) if input_schema else {}
        operation = copy.deepcopy(generic)
        operation["operationId"] = _component_name("start", name)
        operation["summary"] = f"Start a run of {name}"
        operation["parameters"] = [p for p in operation.get("parameters", []) if p.get("in") != "path"]
        body = {
            "type": "object",
            "properties": {"input": {"$ref": _REF + component}},
            "required": ["input"],
            "additionalProperties": False,
        }
        operation["requestBody"] = {"content": {"application/json": {"schema": body}}, "required": True}
        schema["paths"][START_PATH.replace("{name}", name)] = {"post": operation}


def _answer_schemas(schema: dict[str, Any]) -> None:
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    operation = schema["paths"].get(ANSWER_PATH, {}).get("post")
    if operation is None:
        return
    branches: list[dict[str, Any]] = []
    for name, workflow in all_workflows().items():
        listed = []
        for question in declared_questions(workflow):
            entry: dict[str, Any] = {"node": question.node, "interrupt_id": question.interrupt_id}
            if question.schema is not None:
                component = _component_name("Answer", name, question.interrupt_id or question.node)
                if component not in components:
                    components[component] = _hoist(question.schema, component, components)
                    branches.append({"$ref": _REF + component})
                entry["answer_schema"] = {"$ref": _REF + component}
            listed.append(entry)
        start = schema["paths"].get(START_PATH.replace("{name}", name), {}).get("post")
        if start is not None:
            start["x-wfapp-questions"] = listed
    answer = {
        "description": "The answer: it must satisfy the question's `response_schema`. The branches "
        "are the answer schemas the workflows' code declares (see each start operation's "
        "`x-wfapp-questions`).",
        "anyOf": [*branches, OTHER_ANSWERS],
    }
    body = {
        "type": "object",
        "properties": {"answer": answer},
        "required": ["answer"],
        "additionalProperties": False,
    }
    operation["requestBody"] = {"content": {"application/json": {"schema": body}}, "required": True}


def _responses(operation: dict[str, Any]) -> dict[str, Any]:
    """The operation's responses keyed by status text (django-ninja's int keys and ours merged)."""
    merged: dict[str, Any] = {}
    for status, response in operation.get("responses", {}).items():
        merged[str(status)] = {**merged.get(str(status), {}), **response}
    operation["responses"] = merged
    return merged


def _problem_media_types(schema: dict[str, Any]) -> None:
    for path_item in schema["paths"].values():
        for operation in path_item.values():
            for status, response in _responses(operation).items():
                content = response.get("content", {})
                if status[0] in "45" and "application/json" in content:
                    content[MEDIA_TYPE] = content.pop("application/json")


def _optional_bodies(schema: dict[str, Any]) -> None:
    """An optional body (cancel's, retry's) is left out or sent as an object, never as `null`:
    django-ninja documents it as "the object or null"."""
    for path_item in schema["paths"].values():
        for operation in path_item.values():
            body = operation.get("requestBody")
            if not body or body.get("required"):
                continue
            for media in body.get("content", {}).values():
                branches = [b for b in media.get("schema", {}).get("anyOf", []) if b.get("type") != "null"]
                if len(branches) == 1:
                    media["schema"] = branches[0]


def extend(schema: Any) -> Any:
    _workflow_inputs(schema)
    _answer_schemas(schema)
    _problem_media_types(schema)
    _optional_bodies(schema)
    return schema


def docs_access(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """The schema and the docs page need a token or a session, like every other page."""

    @wraps(view)
    def guarded(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        user = getattr(request, "user", None)
        if user is None or not user.is_authenticated:
            try:
                user = TokenAuth()(request)
            except Problem as refused:
                return refused.response(request)
        if user is not None and user.is_authenticated:
            return view(request, *args, **kwargs)
        if request.path.endswith("/docs"):
            return redirect_to_login(request.get_full_path())
        problem = Problem("unauthenticated", "Authentication required: send 'Authorization: Bearer <token>'.")
        return problem.response(request)

    return guarded
