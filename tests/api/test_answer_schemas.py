"""The answer schemas the workflows' code declares: listed per workflow, referenced in OpenAPI."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.api.conftest import Api
from tests.api.flows import COMPUTED_PATH, TEAM_PATH
from wfapp.demos.expense_approval import Decision

REF = "#/components/schemas/"


@pytest.fixture
def computed(settings: Any, workflows: None) -> Iterator[None]:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, COMPUTED_PATH]
    yield


async def test_a_workflow_lists_the_questions_its_code_declares(as_alice: Api, computed: None) -> None:
    expense = (await as_alice.get("workflows/expense_approval")).json()
    asked = {(q["node"], q["interrupt_id"]) for q in expense["questions"]}
    assert asked == {
        ("manager_review", "manager-approval"),
        ("manager_approval", "manager-approval"),
        ("finance_approval", "finance-approval"),
    }
    assert all(q["response_schema"] == Decision.model_json_schema() for q in expense["questions"])
    agent = (await as_alice.get("workflows/support_triage")).json()["questions"]
    assert [(q["node"], q["response_schema"]["title"]) for q in agent] == [
        ("support_agent", "Approve the call to issue_refund")
    ]
    # A schema computed in the body (a local name, even one shadowing a global) is not guessed.
    computed_flow = (await as_alice.get("workflows/computed_questions")).json()["questions"]
    assert computed_flow == [
        {"node": "computed", "interrupt_id": None, "response_schema": None},
        {"node": "literal", "interrupt_id": "plain", "response_schema": {}},
    ]


async def test_the_answer_operation_references_the_declared_answer_schemas(
    as_alice: Api, computed: None
) -> None:
    document = (await as_alice.get("openapi.json")).json()
    components = document["components"]["schemas"]
    body = document["paths"]["/api/v1/interrupts/{question_id}/answer"]["post"]["requestBody"]
    answer = body["content"]["application/json"]["schema"]["properties"]["answer"]
    refs = [branch["$ref"] for branch in answer["anyOf"] if "$ref" in branch]
    manager = REF + "Answer_expense_approval_manager-approval"
    assert manager in refs and REF + "Answer_batch_review_review_item" in refs
    assert components[manager.removeprefix(REF)]["required"] == ["approved"]
    assert "$ref" not in answer["anyOf"][-1] and "response_schema" in answer["anyOf"][-1]["description"]
    start = document["paths"]["/api/v1/workflows/expense_approval/runs"]["post"]
    assert {q["interrupt_id"]: q["answer_schema"]["$ref"] for q in start["x-wfapp-questions"]} == {
        "manager-approval": manager,
        "finance-approval": REF + "Answer_expense_approval_finance-approval",
    }
    computed_start = document["paths"]["/api/v1/workflows/computed_questions/runs"]["post"]
    assert computed_start["x-wfapp-questions"][0] == {"node": "computed", "interrupt_id": None}
    for ref in refs:  # every reference resolves
        assert ref.removeprefix(REF) in components


async def test_a_task_agent_in_a_team_declares_its_replies(
    as_alice: Api, settings: Any, workflows: None
) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, TEAM_PATH]
    questions = (await as_alice.get("workflows/agent_team")).json()["questions"]
    assert [(q["node"], q["response_schema"]["type"]) for q in questions] == [("booker", "string")]
