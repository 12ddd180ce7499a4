"""Cancel with a reason, retry one failed node and retry with an edited input, through the API:
the dashboard's services; bad bodies are 422 problems naming the field and write nothing."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User

from tests.api.conftest import Api, field_errors
from tests.api.conftest import event_kinds as _kinds
from tests.wfapp.helpers import settled
from wfapp.models import Event

ORDERS = "tests.web.flows:orders"
POST_ORDER = "web_orders@1/post_order@1"


@pytest.fixture(autouse=True)
def _orders(settings: Any, workflows: None) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, ORDERS]


@pytest.fixture
def editor(bob: User) -> User:
    """bob may retry with an edited input (alice, who starts the runs, may not edit her own)."""
    bob.user_permissions.add(Permission.objects.get(codename="retry_with_edited_input"))
    return bob


async def _failed_order(api: Api, quantity: int = 12) -> str:
    started = await api.post("workflows/web_orders/runs", {"input": {"sku": "A-1", "quantity": quantity}})
    assert started.status_code == 201, started.content
    await settled(started.json()["id"], "failed")
    return str(started.json()["id"])


async def test_cancel_with_a_reason_records_and_shows_it(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run = await waiting_run()
    assert run["cancelled"] is None
    cancelled = await as_alice.post(f"runs/{run['id']}/cancel", {"reason": "  Duplicate of the March trip  "})
    assert cancelled.status_code == 200, cancelled.content
    assert cancelled.json()["status"] == "cancelled"
    assert cancelled.json()["cancelled"] == {"by": "alice", "reason": "Duplicate of the March trip"}
    shown = (await as_alice.get(f"runs/{run['id']}")).json()
    assert shown["cancelled"] == {"by": "alice", "reason": "Duplicate of the March trip"}
    status = await Event.objects.filter(session_id=run["id"], kind="status").order_by("-seq").afirst()
    assert status is not None and status.data["message"] == "Duplicate of the March trip"


async def test_a_cancel_without_a_body_or_reason_still_cancels(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    first, second = await waiting_run(), await waiting_run()
    assert (await as_alice.post(f"runs/{first['id']}/cancel")).json()["cancelled"] == {
        "by": "alice",
        "reason": "",
    }
    assert (await as_alice.post(f"runs/{second['id']}/cancel", {})).json()["status"] == "cancelled"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"reason": "x" * 2001}, "reason"),
        ({"reason": "bad\x00byte"}, "reason"),
        ({"reason": 7}, "reason"),
        ({"reason": "ok", "force": True}, "force"),
        ([], "body"),
    ],
)
async def test_a_bad_cancel_body_is_a_422_naming_the_field_and_cancels_nothing(
    waiting_run: Callable[..., Any], as_alice: Api, body: Any, field: str
) -> None:
    run = await waiting_run()
    before = await _kinds(run["id"])
    assert field in field_errors(await as_alice.post(f"runs/{run['id']}/cancel", body))
    assert await _kinds(run["id"]) == before
    assert (await as_alice.get(f"runs/{run['id']}")).json()["status"] == "waiting"


async def test_retry_with_an_edited_input_completes_with_it_and_records_who(
    engine_runtime: Any, as_alice: Api, as_bob: Api, editor: User
) -> None:
    run_id = await _failed_order(as_alice)
    edited = {"node": POST_ORDER, "input": {"sku": "A-1", "quantity": 4}}
    retried = await as_bob.post(f"runs/{run_id}/retry", edited)
    assert retried.status_code == 202, retried.content
    session = await settled(run_id, "completed")
    assert session.output == {"posted": "A-1", "quantity": 4}
    retry = await Event.objects.aget(session_id=run_id, kind="retry")
    assert (retry.author, retry.node_path, retry.data["input"]) == ("bob", POST_ORDER, edited["input"])


async def test_retry_keeps_its_reason_in_the_log(
    engine_runtime: Any, as_alice: Api, as_bob: Api, editor: User
) -> None:
    run_id = await _failed_order(as_alice)
    body = {"node": POST_ORDER, "input": {"sku": "A-1", "quantity": 4}, "reason": "  ledger limit is 10  "}
    assert (await as_bob.post(f"runs/{run_id}/retry", body)).status_code == 202
    await settled(run_id, "completed")
    retry = await Event.objects.aget(session_id=run_id, kind="retry")
    assert retry.data["message"] == "ledger limit is 10"


async def test_retry_of_one_named_failed_node_runs_it_again(engine_runtime: Any, as_alice: Api) -> None:
    run_id = await _failed_order(as_alice)
    retried = await as_alice.post(f"runs/{run_id}/retry", {"node": POST_ORDER})
    assert retried.status_code == 202, retried.content
    await settled(run_id, "failed")  # the same input fails again, a second attempt
    retry = await Event.objects.aget(session_id=run_id, kind="retry")
    assert retry.node_path == POST_ORDER and "input" not in retry.data
    assert (await _kinds(run_id)).count("error") == 2


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"node": "web_orders@1/nope@1"}, "node", "'web_orders@1/nope@1' of session"),
        ({"node": "web_orders@1/nope@1", "input": {"sku": "A-1", "quantity": 2}}, "node", "nope@1"),
        ({"node": POST_ORDER, "input": {"sku": "A-1", "quantity": 0}}, "input.quantity", "minimum of 1"),
        ({"node": POST_ORDER, "input": {"sku": "A-1"}}, "input.quantity", "required"),
        ({"input": {"sku": "A-1", "quantity": 2}}, "input", "needs the failed node"),
        ({"node": ""}, "node", "at least 1 character"),
        ({"node": POST_ORDER, "inputs": {}}, "inputs", "Extra inputs"),
        ({"node": POST_ORDER, "input": {"sku": "A\x00", "quantity": 2}}, "input.sku", "NUL"),
        ({"reason": "x" * 2001}, "reason", "2001 characters long"),
        ({"node": POST_ORDER, "reason": "bad\x00byte"}, "reason", "NUL"),
        ({"reason": 7}, "reason", "string"),
    ],
)
async def test_a_bad_retry_body_is_a_422_naming_what_and_writes_nothing(
    engine_runtime: Any,
    as_alice: Api,
    as_bob: Api,
    editor: User,
    body: dict[str, Any],
    field: str,
    words: str,
) -> None:
    run_id = await _failed_order(as_alice)
    before = await _kinds(run_id)
    errors = field_errors(await as_bob.post(f"runs/{run_id}/retry", body))
    assert words.lower() in errors.get(field, "").lower(), errors
    assert await _kinds(run_id) == before
    assert (await as_alice.get(f"runs/{run_id}")).json()["status"] == "failed"


async def test_the_openapi_document_describes_the_cancel_and_retry_bodies(as_alice: Api) -> None:
    schema = (await as_alice.get("openapi.json")).json()
    for path, fields in (("cancel", {"reason"}), ("retry", {"node", "input", "reason"})):
        operation = schema["paths"][f"/api/v1/runs/{{run_id}}/{path}"]["post"]
        body = operation["requestBody"]
        assert body.get("required") is not True
        ref = body["content"]["application/json"]["schema"]
        ref = ref.get("$ref") or next(s["$ref"] for s in ref.get("anyOf", []) if "$ref" in s)
        component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert set(component["properties"]) == fields and component["additionalProperties"] is False
        assert "422" in operation["responses"]
