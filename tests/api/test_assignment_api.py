"""Issue 17 through the API: a question assigned to others is refused with the reason, nothing written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User

from tests.api.conftest import Api
from wfapp.models import Interrupt


async def test_answering_a_question_assigned_to_others_is_forbidden_with_the_reason(
    waiting_run: Callable[..., Any], as_bob: Api, bob: User
) -> None:
    await bob.groups.aclear()  # bob may answer questions, but is in none of the demo's groups
    run = await waiting_run()
    manager = next(q for q in run["pending"] if q["interrupt_id"] == "manager-approval")
    refused = await as_bob.post(f"interrupts/{manager['id']}/answer", {"answer": {"approved": True}})
    assert refused.status_code == 403, refused.content
    problem = refused.json()
    assert problem["type"] == "/api/v1/problems/forbidden"
    assert "bob may not answer: this question is assigned to group:managers" in problem["detail"]
    assert (await Interrupt.objects.aget(pk=manager["id"])).status == "pending"
