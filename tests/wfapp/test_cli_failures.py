"""``manage.py wf retry --node`` and ``wf cancel --reason``: recorded with who, refused with nothing written."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import Permission, User
from django.core.management.base import CommandError

from tests.wfapp.test_cli import wf
from wfapp.models import Event

pytestmark = pytest.mark.usefixtures("queue_worker")  # workers mode: the CLI hands runs to a worker


@pytest.fixture(autouse=True)
def _flows(settings: Any) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:stock_take"]


def test_retry_names_a_failed_node_and_cancel_keeps_a_reason(alice: User) -> None:
    failed = wf("start", "web_stock_take", "--input", json.dumps({"region": "east"}), "--user", "alice")
    run = failed["run"]
    assert failed["status"] == "failed"
    events = Event.objects.filter(session_id=run).count()
    with pytest.raises(
        CommandError, match="has not failed; its failed nodes: web_stock_take@1/price_stock@1"
    ):
        wf("retry", run, "--node", "web_stock_take@1/count_stock@1", "--user", "alice")
    assert Event.objects.filter(session_id=run).count() == events

    again = wf("retry", run, "--node", "web_stock_take@1/price_stock@1", "--user", "alice")
    assert again["status"] == "failed"  # the same input fails the same way, once more
    retry = Event.objects.get(session_id=run, kind="retry")
    assert (retry.author, retry.node_path) == ("alice", "web_stock_take@1/price_stock@1")

    with pytest.raises(CommandError, match="The reason is 2001 characters long"):
        wf("cancel", run, "--reason", "x" * 2001, "--user", "alice")
    cancelled = wf("cancel", run, "--reason", "region closed", "--user", "alice")
    assert cancelled["status"] == "cancelled"
    status = Event.objects.filter(session_id=run, kind="status").order_by("-seq").first()
    assert status is not None and (status.author, status.data["message"]) == ("alice", "region closed")


def test_retry_with_an_edited_input_and_a_reason(alice: User, bob: User) -> None:
    bob.user_permissions.add(Permission.objects.get(codename="retry_with_edited_input"))
    run = wf("start", "web_stock_take", "--input", json.dumps({"region": "east"}), "--user", "alice")["run"]
    node = "web_stock_take@1/price_stock@1"
    events = Event.objects.filter(session_id=run).count()
    with pytest.raises(CommandError, match="The reason is 2001 characters long"):
        wf("retry", run, "--node", node, "--input", '{"region": "east"}', "--reason", "x" * 2001)
    with pytest.raises(CommandError, match="--input"):
        wf("retry", run, "--node", node, "--input", "{not json", "--user", "bob")
    with pytest.raises(CommandError, match="edited input needs the failed node"):
        wf("retry", run, "--input", '{"region": "east"}', "--user", "bob")
    assert Event.objects.filter(session_id=run).count() == events  # nothing written

    done = wf(
        "retry", run, "--node", node, "--input", '{"region": "east", "fixed": true}',
        "--reason", "price list uploaded", "--user", "bob",
    )  # fmt: skip
    assert done["status"] == "completed"
    retry = Event.objects.get(session_id=run, kind="retry")
    assert retry.data["message"] == "price list uploaded"
    assert retry.data["input"] == {"region": "east", "fixed": True}
