"""Issue 24, item 6: a retry with an edited input needs its own permission, is never the run's
requester's, never replaces a human step's decision, and what derives from it says so."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission, User
from django.test import AsyncClient

from tests.api.conftest import Api, event_kinds, request_thread
from tests.wfapp.helpers import settled
from wfapp.models import Event

ORDERS = "tests.web.flows:orders"
POST_ORDER = "web_orders@1/post_order@1"
EDIT = {"node": POST_ORDER, "input": {"sku": "A-1", "quantity": 4}, "reason": "ledger limit is 10"}


@pytest.fixture(autouse=True)
def _orders(settings: Any, workflows: None) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, ORDERS]


def _may_edit(user: User) -> None:
    user.user_permissions.add(Permission.objects.get(codename="retry_with_edited_input"))


async def _failed(api: Api, workflow: str, node_input: Any, *statuses: str) -> str:
    started = await api.post(f"workflows/{workflow}/runs", {"input": node_input})
    assert started.status_code == 201, started.content
    await settled(started.json()["id"], *(statuses or ("failed", "waiting")))
    return str(started.json()["id"])


async def test_an_edited_retry_needs_its_own_permission(
    engine_runtime: Any, as_alice: Api, as_bob: Api, bob: User
) -> None:
    run_id = await _failed(as_alice, "web_orders", {"sku": "A-1", "quantity": 12})
    before = await event_kinds(run_id)
    refused = await as_bob.post(f"runs/{run_id}/retry", EDIT)  # bob may retry, not edit
    assert refused.status_code == 403, refused.content
    assert "retry_with_edited_input" in refused.json()["detail"]
    assert await event_kinds(run_id) == before

    await sync_to_async(_may_edit)(bob)
    assert (await as_bob.post(f"runs/{run_id}/retry", EDIT)).status_code == 202
    await settled(run_id, "completed")


async def test_the_runs_requester_may_not_edit_its_input(
    engine_runtime: Any, as_alice: Api, alice: User
) -> None:
    await sync_to_async(_may_edit)(alice)
    run_id = await _failed(as_alice, "web_orders", {"sku": "A-1", "quantity": 12})
    before = await event_kinds(run_id)
    refused = await as_alice.post(f"runs/{run_id}/retry", EDIT)
    assert refused.status_code == 403, refused.content
    assert "alice requested this run" in refused.json()["detail"]
    assert await event_kinds(run_id) == before
    client = AsyncClient()
    await client.aforce_login(alice)
    async with request_thread():
        page = (await client.get(f"/runs/{run_id}/")).content.decode()
    assert "No edited input: alice requested this run" in page
    unedited = await as_alice.post(f"runs/{run_id}/retry", {"node": POST_ORDER})  # a plain retry is fine
    assert unedited.status_code == 202


async def test_a_node_fed_by_a_human_step_cannot_be_edited(
    engine_runtime: Any, as_alice: Api, as_bob: Api, bob: User
) -> None:
    await sync_to_async(_may_edit)(bob)
    run_id = await _failed(as_alice, "booking", None)
    run = (await as_alice.get(f"runs/{run_id}")).json()
    answered = await as_bob.post(  # not alice: she requested the run (four-eyes)
        f"interrupts/{run['pending'][0]['id']}/answer", {"answer": {"approved": False}}
    )
    assert answered.status_code in (200, 202)
    await settled(run_id, "failed")
    before = await event_kinds(run_id)
    forged = {"node": "booking@1/book@1", "input": {"approved": True}}
    refused = await as_bob.post(f"runs/{run_id}/retry", forged)
    assert refused.status_code == 409, refused.content
    assert refused.json()["type"] == "/api/v1/problems/run-state"
    assert "comes from the human step 'booking@1/approve_booking@1'" in refused.json()["detail"]
    assert await event_kinds(run_id) == before

    client = AsyncClient()
    await client.aforce_login(bob)
    async with request_thread():
        page = (await client.get(f"/runs/{run_id}/")).content.decode()
        posted = await client.post(
            f"/runs/{run_id}/retry/?node=booking@1/book@1&edit=1",
            {"f.approved": "true"},
            headers={"HX-Request": "true"},
        )
    assert "No edited input: its input comes from the human step booking@1/approve_booking@1" in page
    assert 'class="retry-edit"' not in page and "Retry this node" in page
    assert posted.status_code == 409 and "comes from the human step" in posted.content.decode()
    assert await event_kinds(run_id) == before


async def test_an_output_derived_from_an_edited_input_is_marked(
    engine_runtime: Any, as_alice: Api, as_bob: Api, bob: User
) -> None:
    await sync_to_async(_may_edit)(bob)
    plain = await _failed(as_alice, "web_orders", {"sku": "A-1", "quantity": 3}, "completed")
    shown = (await as_alice.get(f"runs/{plain}")).json()
    assert (shown["edited_inputs"], shown["output_from_edited_input"]) == ([], False)

    run_id = await _failed(as_alice, "web_orders", {"sku": "A-1", "quantity": 12})
    assert (await as_bob.post(f"runs/{run_id}/retry", EDIT)).status_code == 202
    await settled(run_id, "completed")
    shown = (await as_alice.get(f"runs/{run_id}")).json()
    retry = await Event.objects.aget(session_id=run_id, kind="retry")
    assert shown["output_from_edited_input"] is True
    assert shown["edited_inputs"] == [
        {"seq": retry.seq, "node": POST_ORDER, "by": "bob", "reason": "ledger limit is 10"}
    ]

    client = AsyncClient()
    await client.aforce_login(bob)
    async with request_thread():
        page = (await client.get(f"/runs/{run_id}/")).content.decode()
    assert 'id="run-output-edited"' in page and "Derived from an edited input" in page
    assert f"bob replaced the input of <code>{POST_ORDER}</code> (#{retry.seq}): ledger limit is 10" in page
