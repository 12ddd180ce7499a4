"""Issue 17 through the API: a question assigned to others is refused with the reason, nothing written."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import Permission, User

from tests.api.conftest import Api
from wfapp.models import Event, Interrupt


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


def _manager_question(run: dict[str, Any]) -> dict[str, Any]:
    return next(q for q in run["pending"] if q["interrupt_id"] == "manager-approval")


async def test_a_claim_holds_the_question_for_its_holder_until_released(
    waiting_run: Callable[..., Any], as_alice: Api, as_bob: Api
) -> None:
    question = _manager_question(await waiting_run(by="rhea"))
    assert question["claimed_by"] is None and question["assignees"] == ["group:managers"]
    claimed = await as_alice.post(f"interrupts/{question['id']}/claim")
    assert claimed.status_code == 200, claimed.content
    assert claimed.json()["claimed_by"] == "alice"
    taken = await as_bob.post(f"interrupts/{question['id']}/claim")
    assert taken.status_code == 409, taken.content
    assert (taken.json()["type"], taken.json()["claimed_by"]) == ("/api/v1/problems/claimed", "alice")
    answer = await as_bob.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answer.status_code == 403, answer.content  # held by alice
    released = await as_alice.post(f"interrupts/{question['id']}/unclaim")
    assert released.status_code == 200 and released.json()["claimed_by"] is None
    assert (await as_bob.post(f"interrupts/{question['id']}/claim")).json()["claimed_by"] == "bob"
    kinds = [e["kind"] async for e in Event.objects.filter(session_id=question["run"]).values("kind")]
    assert kinds.count("assignment") == 3  # claim, unclaim, claim: every decision in the log


async def test_reassigning_needs_the_permission_and_known_names(
    waiting_run: Callable[..., Any], as_alice: Api, alice: User, bob: User
) -> None:
    question = _manager_question(await waiting_run())
    path = f"interrupts/{question['id']}/reassign"
    refused = await as_alice.post(path, {"to": ["bob"]})
    assert refused.status_code == 403, refused.content
    await alice.user_permissions.aadd(await Permission.objects.aget(codename="reassign_interrupt"))
    unknown = await as_alice.post(path, {"to": ["bob", "nobody-here"]})
    assert unknown.status_code == 422, unknown.content
    assert unknown.json()["errors"] == [{"field": "to", "message": "no known user or group: nobody-here"}]
    for bad in ({"to": []}, {"to": [""]}, {"to": "bob"}, {"to": ["bob"], "extra": 1}):
        assert (await as_alice.post(path, bad)).status_code == 422, bad
    assert (await as_alice.get(f"interrupts/{question['id']}")).json()["assignees"] == ["group:managers"]
    moved = await as_alice.post(path, {"to": ["bob"]})
    assert moved.status_code == 200, moved.content
    assert moved.json()["assignees"] == ["bob"]


async def test_decisions_on_questions_one_may_not_see_or_that_closed_change_nothing(
    waiting_run: Callable[..., Any], as_alice: Api, as_mallory: Api, anonymous: Api
) -> None:
    question = _manager_question(await waiting_run(by="rhea"))
    mallorys = await as_mallory.post(f"interrupts/{question['id']}/claim")
    assert mallorys.status_code == 404  # not hers to answer: it does not exist for her
    assert (await anonymous.post(f"interrupts/{question['id']}/claim")).status_code == 401
    assert (await as_alice.post("interrupts/999999/claim")).status_code == 404
    answered = await as_alice.post(f"interrupts/{question['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code in (200, 202), answered.content
    late = await as_alice.post(f"interrupts/{question['id']}/claim")
    assert late.status_code == 409 and late.json()["type"] == "/api/v1/problems/decision-refused"
    assert (
        "'manager-approval' of run" in late.json()["detail"] and "no longer pending" in late.json()["detail"]
    )
    assert (await Interrupt.objects.aget(pk=question["id"])).claimed_by in ("", None)
