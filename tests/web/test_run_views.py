"""Workflows, start forms, the runs list and the run page (full pages and htmx fragments)."""

from __future__ import annotations

import re

from django.test import Client
from django.urls import reverse

from tests.web.conftest import BIG_EXPENSE, pending
from wfapp.models import Session

HX = {"HTTP_HX_REQUEST": "true"}


def test_workflows_page_shows_each_graph_and_a_start_link(operator_client: Client) -> None:
    html = operator_client.get(reverse("workflows")).content.decode()
    for name in ("expense_approval", "document_review", "batch_review"):
        assert f'id="workflow-{name}"' in html
        assert reverse("workflow", args=[name]) in html
    assert 'data-node="manager_review"' in html
    assert ">auto</text>" in html  # a route label


def test_start_form_comes_from_the_input_schema(operator_client: Client) -> None:
    html = operator_client.get(reverse("workflow", args=["expense_approval"])).content.decode()
    assert 'name="f.employee"' in html and 'name="f.description"' in html
    assert re.search(r'name="f.amount" type="number"[^>]*min="0"', html)
    assert html.count('name="f.category"') == 4  # radio buttons


def test_start_with_invalid_input_is_422_and_starts_nothing(operator_client: Client) -> None:
    data = {"f.employee": "Ann", "f.amount": "-3", "f.category": "travel", "f.description": "x"}
    response = operator_client.post(reverse("workflow-start", args=["expense_approval"]), data, **HX)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Enter a value greater than 0." in html and 'value="-3"' in html
    assert not Session.objects.exists()


def test_start_redirects_to_the_new_run(operator_client: Client) -> None:
    data = {"f.employee": "Ann", "f.amount": "1500", "f.category": "travel", "f.description": "Flights"}
    response = operator_client.post(reverse("workflow-start", args=["expense_approval"]), data, **HX)
    assert response.status_code == 200
    run = Session.objects.get()
    assert response["HX-Redirect"] == reverse("run", args=[run.pk])
    assert run.input == {"employee": "Ann", "amount": "1500", "category": "travel", "description": "Flights"}
    assert run.created_by.username == "olga"


def test_a_decimal_amount_keeps_its_trailing_zeros_from_the_form_on(operator_client: Client, advance) -> None:
    for amount in ("12.50", "250.50"):
        data = {"f.employee": "Ann", "f.amount": amount, "f.category": "meals", "f.description": "Lunch"}
        operator_client.post(reverse("workflow-start", args=["expense_approval"]), data, **HX)
    small, large = Session.objects.order_by("created_at")
    assert (small.input["amount"], large.input["amount"]) == ("12.50", "250.50")
    advance(small.pk)
    advance(large.pk)
    output = operator_client.get(reverse("run", args=[small.pk])).content.decode()
    # A number is marked for the page to write the viewer's way, its decimals kept (times.js).
    assert re.search(r'<dt>Amount</dt><dd><span data-number="12\.50">12\.50</span></dd>', output)
    assert "Approved automatically" in output
    inbox = operator_client.get(reverse("inbox")).content.decode()
    assert "claims 250.50 for meals" in inbox and re.search(
        r'<dt>Amount</dt><dd><span data-number="250\.50">250\.50</span></dd>', inbox
    )


def test_unknown_workflow_is_404(operator_client: Client) -> None:
    assert operator_client.get(reverse("workflow", args=["nope"])).status_code == 404


def test_runs_list_filters_and_fragment(operator_client: Client, start_run) -> None:
    waiting = start_run()
    done = start_run(node_input={**BIG_EXPENSE, "amount": 20})
    html = operator_client.get(reverse("runs")).content.decode()
    assert f'id="run-row-{waiting}"' in html and f'id="run-row-{done}"' in html
    fragment = operator_client.get(reverse("runs"), {"status": "completed"}, **HX).content.decode()
    assert fragment.lstrip().startswith('<section id="runs-list"')
    assert f'id="run-row-{done}"' in fragment and f'id="run-row-{waiting}"' not in fragment
    by_id = operator_client.get(reverse("runs"), {"q": waiting[:8]}, **HX).content.decode()
    assert f'id="run-row-{waiting}"' in by_id


def test_run_page_shows_graph_statuses_timeline_and_questions(operator_client: Client, start_run) -> None:
    run = start_run()
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert 'class="node kind-function status-completed" data-node="triage"' in html
    assert 'data-node="manager_approval" data-status="waiting"' in html
    assert 'data-node="auto_approve" data-status="pending"' in html
    assert "Asked for input" in html and "Route" in html
    for row in pending(run):
        assert f'id="interrupt-{row.pk}"' in html
    assert f'ws-connect="/ws/runs/{run}/?after=' in html
    assert "Cancel run" in html


def test_completed_run_shows_its_output(operator_client: Client, start_run) -> None:
    run = start_run(node_input={**BIG_EXPENSE, "amount": 20})
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert 'id="run-output"' in html and "Approved automatically" in html
    assert "Cancel run" not in html
    assert "Waiting for an answer" not in html  # a finished run asks nothing more


def test_node_output_is_shown_as_text(operator_client: Client, start_run) -> None:
    run = start_run(node_input={**BIG_EXPENSE, "description": "<script>alert(1)</script>"})
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert "<script>alert(1)" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_cancel_from_the_run_page(operator_client: Client, start_run) -> None:
    run = start_run()
    response = operator_client.post(reverse("run-cancel", args=[run]), **HX)
    assert response.status_code == 200
    assert response["HX-Refresh"] == "true"
    assert Session.objects.get(pk=run).status == "cancelled"
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert 'data-node="manager_approval" data-status="pending"' in html
    who = Session.objects.get(pk=run)  # the operator cancelled it: the page says so, thrice
    assert 'id="run-status-by">by olga</span>' in html
    assert "Cancelled by <strong>olga</strong>" in html
    assert "<strong>Run cancelled by olga</strong>" in html
    assert who.status == "cancelled"
    again = operator_client.post(reverse("run-cancel", args=[run]), **HX)
    assert again.status_code == 409


def test_retry_refused_for_a_run_that_did_not_fail(operator_client: Client, start_run) -> None:
    run = start_run()
    response = operator_client.post(reverse("run-retry", args=[run]), **HX)
    assert response.status_code == 409
    assert "only a failed run can be retried" in response.content.decode()


def test_unknown_run_is_404(operator_client: Client, db) -> None:
    assert operator_client.get(reverse("run", args=["missing"])).status_code == 404


def test_not_found_page_is_styled(operator_client: Client, db) -> None:
    response = operator_client.get("/runs/missing/")
    assert response.status_code == 404
    assert "There is nothing here, or you may not see it." in response.content.decode()


def test_failed_run_shows_error_as_text_and_offers_retry(
    operator_client: Client, start_run, settings
) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:broken"]
    run = start_run("web_broken", {"any": "input"})
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert '<span class="status failed" id="run-status">failed</span>' in html
    assert 'data-node="post_to_ledger" data-status="failed"' in html
    assert "&lt;img src=x onerror=alert(1)&gt; the ledger is locked" in html
    assert "<img src=x" not in html
    assert "Retry failed nodes" in html and "Cancel run" in html
    response = operator_client.post(reverse("run-retry", args=[run]), HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert response["HX-Refresh"] == "true"


def test_a_free_form_start_form_asks_for_the_input(operator_client: Client, settings) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:locked_ledger"]
    html = operator_client.get(reverse("workflow", args=["web_locked_ledger"])).content.decode()
    assert ">Input<" in html and ">Answer<" not in html


def test_staff_find_the_admin_from_the_navigation(operator_client: Client, operator) -> None:
    assert 'href="/admin/">Admin</a>' not in operator_client.get(reverse("runs")).content.decode()
    operator.is_staff = True
    operator.save(update_fields=["is_staff"])
    assert 'href="/admin/">Admin</a>' in operator_client.get(reverse("runs")).content.decode()


def test_batch_review_starts_from_a_row_editor_not_json(operator_client: Client) -> None:
    url = reverse("workflow-start", args=["batch_review"])
    page = operator_client.get(reverse("workflow", args=["batch_review"])).content.decode()
    assert 'class="json"' not in page
    assert 'name="f.items.0.sku"' in page and 'name="f.items.0.price"' in page
    assert 'value="add:f.items"' in page and "formnovalidate" in page

    row = {"f.items": ["0"], "f.items.0.sku": "A-1", "f.items.0.price": "12.50"}
    added = operator_client.post(url, {**row, "_rows": "add:f.items"}, **HX)
    assert added.status_code == 200  # not an error: the form again, one row more
    html = added.content.decode()
    assert 'name="f.items.1.sku"' in html and 'value="A-1"' in html and 'value="12.50"' in html
    assert "Item 2" in html and "errors" not in html
    assert not Session.objects.exists()

    bad = {**row, "f.items": ["0", "1"], "f.items.1.sku": "B-2", "f.items.1.price": "-1"}
    refused = operator_client.post(url, bad, **HX)
    assert refused.status_code == 422
    html = refused.content.decode()
    assert re.search(r'name="f.items.1.price" type="number" value="-1"[^>]*aria-invalid="true"', html)
    assert re.search(r'data-field="items.1.price">.*?Enter a value of at least 0\.', html, re.S)
    assert not Session.objects.exists()

    good = {**bad, "f.items.1.price": "3.10", "f.items.1.flagged": "true"}
    assert operator_client.post(url, good, **HX).status_code == 200
    assert Session.objects.get().input == {
        "items": [
            {"sku": "A-1", "price": "12.50", "flagged": False},
            {"sku": "B-2", "price": "3.10", "flagged": True},
        ]
    }
