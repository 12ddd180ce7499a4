"""``workflows``: the registered workflows, one with its graph and questions, starting a run of one."""

from __future__ import annotations

from typing import Any

from asgiref.sync import sync_to_async
from django.http import HttpRequest, HttpResponse
from ninja import Router

from wfapp.api import idempotency, reads
from wfapp.api.answer_schemas import declared_questions
from wfapp.api.auth import caller, reaches
from wfapp.api.problems import Problem
from wfapp.api.responses import document, problems
from wfapp.api.schemas import Run, StartBody, Workflow, WorkflowList
from wfapp.registry import all_workflows, get_workflow
from wfapp.runs import starting

router = Router(tags=["workflows"])


def _summary(workflow: Any) -> dict[str, Any]:
    describe = workflow.describe()
    return {
        "name": workflow.name,
        "description": describe.get("description") or "",
        "input_schema": workflow.input_json_schema,
    }


@router.get("", response={200: WorkflowList, **problems(401)}, summary="List the workflows")
async def list_workflows(request: HttpRequest) -> Any:
    return {"items": [_summary(wf) for wf in all_workflows().values() if reaches(request, wf.name)]}


@router.get("/{name}", response={200: Workflow, **problems(401, 404)}, summary="One workflow")
async def get_one(request: HttpRequest, name: str) -> Any:
    if not reaches(request, name):
        raise Problem("not-found", f"No workflow {name!r} within this API token's scope.")
    workflow = get_workflow(name)
    describe = workflow.describe()
    graph = {"nodes": describe.get("nodes") or [], "edges": describe.get("edges") or []}
    questions = [
        {"node": q.node, "interrupt_id": q.interrupt_id, "response_schema": q.schema}
        for q in declared_questions(workflow)
    ]
    return {**_summary(workflow), "graph": graph, "questions": questions}


@router.post(
    "/{name}/runs",
    response={201: Run, **problems(400, 401, 403, 404, 409, 413, 415, 422)},
    summary="Start a run",
    openapi_extra={"parameters": [idempotency.PARAMETER]},
)
async def start(request: HttpRequest, name: str, body: StartBody) -> HttpResponse:
    """Validate `input` against the workflow's input schema and start a run in the background.

    With an `Idempotency-Key`, a retry returns the first run instead of starting another.
    """
    user = caller(request)
    get_workflow(name)  # 404 for an unknown workflow, before the key is reserved
    if not reaches(request, name):
        raise Problem("token-scope", f"This API token is limited to other workflows than {name!r}.")

    async def act() -> idempotency.Outcome:
        session_id = await starting.start_run(name, body.input, user=user)
        data = await sync_to_async(reads.run_document)(user, session_id)
        return idempotency.Outcome(201, document(Run, data), f"/api/v1/runs/{session_id}")

    return await idempotency.once(request, user, act)
