"""Issue 14's defects below the browser: a lost race's card, the question page's socket, the runs
list's inserts of runs started elsewhere, who cancelled, labels, timeline words, graph clipping."""

from __future__ import annotations

import json
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from tests.web.conftest import BIG_EXPENSE, pending

# The consumers' fixtures: a user with a session, and closing the threads' connections after.
from tests.web.test_consumers import _close_thread_connections as _close_thread_connections
from tests.web.test_consumers import advance, drain, socket, start
from tests.web.test_consumers import olga as olga
from tests.web.test_graph_svg import edge
from wfapp.runs import answering, starting
from wfapp.schema_forms.form import SchemaForm
from wfapp.schema_forms.words import field_label, humanize
from wfapp.web.graph.svg import render_graph
from wfapp.web.readable import summary
from wfapp.web.run_state import describe_event

HX = {"HTTP_HX_REQUEST": "true"}
SMALL = {**BIG_EXPENSE, "amount": 500, "employee": "Lena"}  # one question: the manager's


def _lose_race(client: Client, winner: User, run: str, **headers: Any) -> tuple[int, str]:
    (ask,) = pending(run)
    answer = {"approved": False, "comment": "over budget"}
    async_to_sync(answering.answer_interrupt)(run, ask.interrupt_id, answer, user=winner)
    late = {"f.approved": "true", "f.comment": "fine by me <b>really</b>"}
    response = client.post(reverse("answer", args=[ask.pk]), late, **headers)
    return response.status_code, response.content.decode()


def test_a_lost_race_keeps_the_question_the_draft_and_shows_the_winners_answer(
    operator_client: Client, other_operator: User, start_run
) -> None:
    run = start_run(node_input=SMALL)
    status, html = _lose_race(operator_client, other_operator, run, **HX)
    assert status == 409
    assert "Manager approval" in html  # the question
    assert "Lena" in html  # its details
    assert "Already answered by piet" in html and "Rejected · Comment: over budget" in html
    assert "your answer below was not recorded" in html
    assert '<fieldset class="draft" disabled' in html  # the draft, read-only
    assert "fine by me &lt;b&gt;really&lt;/b&gt;" in html  # escaped
    assert pending(run) == []


def test_a_lost_race_without_javascript_shows_the_question_page_with_the_draft(
    operator_client: Client, other_operator: User, start_run
) -> None:
    run = start_run(node_input=SMALL)
    status, html = _lose_race(operator_client, other_operator, run)
    assert status == 409
    assert "<h1>Question from expense_approval</h1>" in html
    assert "Already answered by piet" in html and "fine by me" in html


def test_a_closed_questions_page_says_why(operator_client: Client, start_run) -> None:
    run = start_run(node_input=SMALL)
    (ask,) = pending(run)
    operator_client.post(reverse("run-cancel", args=[run]), **HX)
    html = operator_client.get(reverse("interrupt", args=[ask.pk])).content.decode()
    assert "No longer needed: the run was cancelled." in html
    assert 'ws-connect="/ws/interrupts/' in html


def test_who_cancelled_is_on_the_runs_list(operator_client: Client, start_run) -> None:
    run = start_run(node_input=SMALL)
    operator_client.post(reverse("run-cancel", args=[run]), **HX)
    html = operator_client.get(reverse("runs")).content.decode()
    row = html.split(f'id="run-row-{run}"', 1)[1].split("</tr>", 1)[0]
    assert '<span class="status cancelled">cancelled</span> <span class="by">by olga</span>' in row


async def test_the_question_page_closes_when_someone_else_answers(olga: User) -> None:
    run = await start({**BIG_EXPENSE, "amount": 500})
    (ask,) = await sync_to_async(pending)(run)
    comm = await socket(f"/ws/interrupts/{ask.pk}/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "open": [ask.pk]}))
    assert f'id="interrupt-{ask.pk}"' not in await drain(comm)  # still open: nothing to close
    await answering.answer_interrupt(run, ask.interrupt_id, {"approved": True}, user=olga)
    html = await drain(comm)
    assert f'id="interrupt-{ask.pk}" hx-swap-oob="true"' in html
    assert "Answered by olga" in html
    await advance(run)
    assert f'id="interrupt-{ask.pk}"' not in await drain(comm)  # closed once
    await comm.disconnect()


async def test_a_question_page_socket_is_refused_for_an_unknown_question(olga: User) -> None:
    comm = await socket("/ws/interrupts/999999/", olga)
    assert not (await comm.connect())[0]


async def test_the_runs_list_inserts_a_run_first_heard_of_after_it_started(olga: User) -> None:
    """A run another process started and advanced rings first with seq > 0 (the change watch)."""
    comm = await socket("/ws/runs/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "rendered_at": "2000-01-01T00:00:00+00:00"}))
    await drain(comm)
    layer = get_channel_layer()
    old = await start({**BIG_EXPENSE, "amount": 20})  # rang while this page listened
    await drain(comm)
    # Another page rendered after `old` started: a ring for it updates its row, never inserts it.
    late = await socket("/ws/runs/", olga)
    assert (await late.connect())[0]
    await late.send_to(text_data=json.dumps({"type": "hello", "rendered_at": "2999-01-01T00:00:00+00:00"}))
    await drain(late)
    ring = {"type": "wfapp.doorbell", "session_id": old, "seq": 5, "ring": "other-1"}
    await layer.group_send("wfapp.runs", ring)
    assert "afterbegin:#runs-body" not in await drain(late)
    await late.disconnect()
    # A run heard of for the first time at seq 7 is inserted on the page rendered before it.
    new, _ = await starting.create_run("expense_approval", {**BIG_EXPENSE, "amount": 20})
    await layer.group_send("wfapp.runs", {**ring, "session_id": new, "seq": 7, "ring": "other-2"})
    html = await drain(comm)
    assert f'<tbody hx-swap-oob="afterbegin:#runs-body">\n<tr id="run-row-{new}"' in html
    await layer.group_send("wfapp.runs", {**ring, "session_id": new, "seq": 8, "ring": "other-3"})
    html = await drain(comm)
    assert "afterbegin" not in html and f'<tr id="run-row-{new}" hx-swap-oob="true">' in html
    await comm.disconnect()


@pytest.mark.parametrize(
    ("key", "title", "label"),
    [
        ("sku", "Sku", "SKU"),  # pydantic's own title: the key's words, with the acronym
        ("order_id", "Order Id", "Order ID"),
        ("sku", "Stock keeping unit", "Stock keeping unit"),  # a title someone wrote
        ("sku", "SKU", "SKU"),
        ("vat_rate", None, "VAT rate"),
        ("identity", None, "Identity"),  # only whole words
    ],
)
def test_labels_keep_acronyms_and_written_titles(key: str, title: str | None, label: str) -> None:
    assert field_label(key, title) == label


def test_a_form_labels_fields_from_their_titles() -> None:
    schema = {
        "type": "object",
        "properties": {
            "sku": {"type": "string", "title": "Sku"},
            "ean": {"type": "string", "title": "EAN-13 code"},
            "unit_price": {"type": "number"},
        },
    }
    labels = [w.label for w in SchemaForm(schema).fields]
    assert labels == ["SKU", "EAN-13 code", "Unit price"]
    assert humanize("api_url") == "API URL"


def test_timeline_details_are_words_and_rows_with_the_json_apart() -> None:
    value = {"items": [{"sku": "A1"}, {"sku": "B2"}], "total": 3}
    entry = describe_event(4, 0.0, "output", "wf@1/sum@1", "wf", {"output": value})
    assert entry.detail == "Items: 2 items · Total: 3"
    assert "{" not in entry.detail
    assert [r.label for r in entry.values] == ["Items", "Total"]
    assert entry.raw and '"total": 3' in entry.full
    assert summary({"a": {"b": 1}}) == "A: B: 1"
    assert summary([{"x": [1, 2]}]) == "1 field"


def test_cancelled_by_on_the_timeline_and_unnamed_cancels() -> None:
    named = describe_event(9, 0.0, "status", "wf@1", "piet", {"status": "cancelled"})
    assert (named.title, named.actor) == ("Run cancelled by piet", "piet")
    anonymous = describe_event(9, 0.0, "status", "wf@1", "user", {"status": "cancelled"})
    assert anonymous.title == "Run cancelled"


def test_children_of_one_name_clip_to_different_labels() -> None:
    describe = {
        "name": "wf",
        "nodes": [
            {"name": "START", "kind": "start", "terminal": False},
            {"name": "reviews", "kind": "function", "terminal": True},
        ],
        "edges": [edge("START", "reviews")],
    }
    kids = [{"path": f"wf@1/reviews@1/ask_reviewer_about_the_draft@{i}", "status": "waiting"} for i in (1, 2)]
    svg = render_graph(describe, {"reviews": "waiting"}, {"reviews": kids})
    assert "…@1</text>" in svg and "…@2</text>" in svg
