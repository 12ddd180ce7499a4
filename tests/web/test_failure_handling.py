"""The run page's failure handling through the dashboard: attempts with folded tracebacks,
retry of one failed node (graph fan-out and dynamic child), retry with an edited input checked
against the node's schema, cancel with a reason; refusals change nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from tests.web.conftest import client_for
from wfapp.models import Event, Session
from wfapp.web import presenter

HX = {"HTTP_HX_REQUEST": "true"}
FLOWS = ["tests.web.flows:orders", "tests.web.flows:stock_take", "tests.web.flows:collect"]


@pytest.fixture(autouse=True)
def _flows(settings: Any) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *FLOWS]


def _kinds(run: str) -> list[str]:
    return list(Event.objects.filter(session_id=run).order_by("seq").values_list("kind", flat=True))


def _page(client: Client, run: str) -> str:
    return client.get(reverse("run", args=[run])).content.decode()


def test_a_failed_node_shows_its_attempts_and_folded_traceback(operator_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    html = _page(operator_client, run)
    assert 'id="run-failures"' in html and 'data-node-path="web_orders@1/post_order@1"' in html
    assert "<strong>RuntimeError</strong>: the ledger refuses 12 of A-1" in html
    assert (
        '<details class="traceback"><summary>Traceback of attempt 1</summary><pre>Traceback (most recent call last)'
        in html
    )
    assert "in post_order" in html
    assert "Retry this node" in html and "Retry with an edited input (the run's start input)" in html
    # The edit form comes from the node's input type, filled with the input it failed on.
    assert 'name="f.sku"' in html and 'value="A-1"' in html and 'value="12"' in html


def test_retry_with_an_edited_start_input_completes_and_records_who(
    operator_client: Client, start_run, advance
) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    url = reverse("run-retry", args=[run]) + "?node=web_orders@1/post_order@1&edit=1"
    response = operator_client.post(url, {"f.sku": "A-1", "f.quantity": "4"}, **HX)
    assert response.status_code == 200 and response["HX-Refresh"] == "true"
    retry = Event.objects.get(session_id=run, kind="retry")
    assert retry.author == "olga" and retry.data["input"] == {"sku": "A-1", "quantity": 4}
    advance(run, "web_orders")
    session = Session.objects.get(pk=run)
    assert session.status == "completed" and session.output == {"posted": "A-1", "quantity": 4}
    html = _page(operator_client, run)
    assert "Retried by olga" in html and "with an edited input" in html
    assert '<span class="status completed">recovered</span>' in html


def test_an_edited_input_that_fails_the_schema_is_422_and_changes_nothing(
    operator_client: Client, start_run
) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    before = _kinds(run)
    url = reverse("run-retry", args=[run]) + "?node=web_orders@1/post_order@1&edit=1"
    response = operator_client.post(url, {"f.sku": "A-1", "f.quantity": "0"}, **HX)
    assert response.status_code == 422
    html = response.content.decode()
    assert 'value="0"' in html and "Enter a value of at least 1." in html
    assert _kinds(run) == before
    assert Session.objects.get(pk=run).status == "failed"


def test_retrying_a_node_that_did_not_fail_is_a_conflict(operator_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    before = _kinds(run)
    response = operator_client.post(reverse("run-retry", args=[run]), {"node": "web_orders@1/nope@1"}, **HX)
    assert response.status_code == 409
    assert "has not failed; its failed nodes: web_orders@1/post_order@1" in response.content.decode()
    edit = reverse("run-retry", args=[run]) + "?node=web_orders@1/nope@1&edit=1"
    assert operator_client.post(edit, {"f.sku": "A-1", "f.quantity": "2"}, **HX).status_code == 409
    assert _kinds(run) == before


def test_retry_needs_the_permission_and_checks_it_before_the_form(viewer_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    before = _kinds(run)
    assert "Retry this node" not in _page(viewer_client, run)
    url = reverse("run-retry", args=[run]) + "?node=web_orders@1/post_order@1&edit=1"
    response = viewer_client.post(url, {"f.sku": "A-1", "f.quantity": "zero"}, **HX)
    assert response.status_code == 403 and "may not retry runs" in response.content.decode()
    node = {"node": "web_orders@1/post_order@1"}
    assert viewer_client.post(reverse("run-retry", args=[run]), node, **HX).status_code == 403
    assert _kinds(run) == before


def test_a_failed_branch_of_a_fan_out_is_retried_alone(operator_client: Client, start_run, advance) -> None:
    run = start_run("web_stock_take", {"region": "south"})
    html = _page(operator_client, run)
    assert 'data-node-path="web_stock_take@1/price_stock@1"' in html
    assert 'data-node-path="web_stock_take@1/count_stock@1"' not in html  # it completed
    url = reverse("run-retry", args=[run]) + "?node=web_stock_take@1/price_stock@1&edit=1"
    response = operator_client.post(url, {"f": '{"region": "south", "fixed": true}'}, **HX)
    assert response.status_code == 200, response.content.decode()
    advance(run, "web_stock_take")
    session = Session.objects.get(pk=run)
    assert session.status == "completed"
    assert session.output == {"count_stock": {"counted": "south"}, "price_stock": {"priced": "south"}}
    started = Event.objects.filter(session_id=run, kind="started").values_list("node_path", flat=True)
    assert list(started).count("web_stock_take@1/count_stock@1") == 1  # the completed branch never reran


def test_a_failed_dynamic_child_is_retried_with_an_edited_input(
    operator_client: Client, start_run, advance
) -> None:
    run = start_run("web_collect", [1, -2, 3])
    child = "web_collect@1/collect_items@1/fetch_item@2"
    assert f'data-node-path="{child}"' in _page(operator_client, run)
    bad = operator_client.post(
        reverse("run-retry", args=[run]) + f"?node={child}&edit=1", {"f": "[oops"}, **HX
    )
    assert bad.status_code == 422
    response = operator_client.post(
        reverse("run-retry", args=[run]) + f"?node={child}&edit=1", {"f": "5"}, **HX
    )
    assert response.status_code == 200
    advance(run, "web_collect")
    assert Session.objects.get(pk=run).output == [2, 10, 6]


def test_cancel_with_a_reason_is_recorded_and_shown(operator_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    too_long = operator_client.post(reverse("run-cancel", args=[run]), {"reason": "x" * 2001}, **HX)
    assert too_long.status_code == 422 and "The reason is 2001 characters long" in too_long.content.decode()
    assert Session.objects.get(pk=run).status == "failed"
    response = operator_client.post(reverse("run-cancel", args=[run]), {"reason": "duplicate order"}, **HX)
    assert response.status_code == 200
    status = Event.objects.filter(session_id=run, kind="status").order_by("-seq").first()
    assert status is not None and (status.author, status.data["message"]) == ("olga", "duplicate order")
    html = _page(operator_client, run)
    assert "Cancelled by <strong>olga</strong> · Reason: duplicate order" in html
    assert "Run cancelled by olga" in html


def test_another_operator_sees_the_retry_in_the_timeline(
    operator_client: Client, other_operator: Any, start_run
) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    operator_client.post(reverse("run-retry", args=[run]), {"node": "web_orders@1/post_order@1"}, **HX)
    html = _page(client_for(other_operator), run)
    assert "Retried by olga" in html


def test_a_whole_run_retry_is_recorded_with_who(operator_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    response = operator_client.post(reverse("run-retry", args=[run]), **HX)
    assert response.status_code == 200
    retry = Event.objects.get(session_id=run, kind="retry")
    assert (retry.node_path, retry.author, retry.data) == ("web_orders@1", "olga", {})


def test_a_retry_keeps_its_reason_and_the_page_shows_it(operator_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    html = _page(operator_client, run)
    # Each reason field has a label one can see (not only a placeholder), the node's whole path in it.
    assert '<label for="retry-reason-input">Reason for retrying (optional)</label>' in html
    assert '<label for="cancel-reason-input">Reason for cancelling (optional)</label>' in html
    assert (
        '<label for="failure-1-reason">Reason for retrying <span class="path">web_orders@1/post_order@1</span>'
        " (optional)</label>" in html
    )
    response = operator_client.post(
        reverse("run-retry", args=[run]),
        {"node": "web_orders@1/post_order@1", "reason": "ledger back up"},
        **HX,
    )
    assert response.status_code == 200
    assert Event.objects.get(session_id=run, kind="retry").data["message"] == "ledger back up"
    assert "Retried by <strong>olga</strong>" in _page(operator_client, run)
    assert "ledger back up" in _page(operator_client, run)


def test_an_edited_retry_keeps_its_reason_and_refuses_a_reason_too_long(
    operator_client: Client, start_run
) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    url = reverse("run-retry", args=[run]) + "?node=web_orders@1/post_order@1&edit=1"
    assert 'name="reason"' in operator_client.get(reverse("run", args=[run])).content.decode()
    before = _kinds(run)
    too_long = operator_client.post(url, {"f.sku": "A-1", "f.quantity": "4", "reason": "x" * 2001}, **HX)
    assert too_long.status_code == 422 and "2001 characters long" in too_long.content.decode()
    invalid = operator_client.post(url, {"f.sku": "A-1", "f.quantity": "0", "reason": "typo fixed"}, **HX)
    assert invalid.status_code == 422 and 'value="typo fixed"' in invalid.content.decode()
    assert _kinds(run) == before
    done = operator_client.post(url, {"f.sku": "A-1", "f.quantity": "4", "reason": "typo fixed"}, **HX)
    assert done.status_code == 200
    retry = Event.objects.get(session_id=run, kind="retry")
    assert (retry.data["input"], retry.data["message"]) == ({"sku": "A-1", "quantity": 4}, "typo fixed")


def test_a_page_open_elsewhere_hears_of_the_retry_live(
    operator_client: Client, operator: Any, start_run
) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    seen = Session.objects.get(pk=run).last_seq
    operator_client.post(reverse("run-retry", args=[run]), {"node": "web_orders@1/post_order@1"}, **HX)
    update = presenter.run_update(run, operator, seen)
    assert 'id="run-failures"' in update.html and "Retried by <strong>olga</strong>" in update.html
    assert "Retried by olga" in update.html  # the timeline entry


def test_an_edited_input_without_its_node_is_refused(operator_client: Client, start_run) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    before = _kinds(run)
    response = operator_client.post(reverse("run-retry", args=[run]) + "?edit=1", {"f.sku": "A-1"}, **HX)
    assert response.status_code == 422 and "needs the failed node" in response.content.decode()
    assert _kinds(run) == before


def test_tracebacks_are_shown_only_to_who_may_retry(
    operator_client: Client, viewer_client: Client, start_run
) -> None:
    run = start_run("web_orders", {"sku": "A-1", "quantity": 12})
    html = _page(viewer_client, run)  # may view the run, may not retry it
    assert "<strong>RuntimeError</strong>: the ledger refuses 12 of A-1" in html
    assert "Traceback" not in html and "in post_order" not in html
    seen = viewer_client.get(f"/api/v1/runs/{run}/events").json()
    [error] = [e["data"]["error"] for e in seen["items"] if e["kind"] == "error"]
    assert error["message"] == "the ledger refuses 12 of A-1" and "traceback" not in error
    retrier = operator_client.get(f"/api/v1/runs/{run}/events").json()
    [error] = [e["data"]["error"] for e in retrier["items"] if e["kind"] == "error"]
    assert "in post_order" in error["traceback"]
    assert "in post_order" in _page(operator_client, run)
