"""Answers, payloads and outputs as people read them, not as JSON."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.web.conftest import BIG_EXPENSE, pending
from wfapp.web.readable import Row, answer_summary, rows


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ({"approved": False, "comment": "too expensive"}, "Rejected · Comment: too expensive"),
        ({"approved": True, "comment": ""}, "Approved"),
        ({"approve": True}, "Approved"),
        (
            {"priority": "high", "tags": ["a", "b"], "urgent": False},
            "Priority: high · Tags: a, b · Urgent: No",
        ),
        ({"nested": {"k": 1}}, "Nested: K: 1"),
        ({"deep": {"k": [1, {"x": 2}]}}, 'Deep: {"k": [1, {"x": 2}]}'),
        (True, "Yes"),
        ("plain text", "plain text"),
        ({}, "(empty answer)"),
    ],
)
def test_answer_summary(answer: object, text: str) -> None:
    assert answer_summary(answer) == text


def test_rows_flatten_lists_of_scalars_and_keep_nested_values_as_blocks() -> None:
    assert rows({"decided_by": ["manager", "finance"], "approved": True, "detail": {"a": [1, {"b": 2}]}}) == [
        Row("Decided by", "manager, finance", False),
        Row("Approved", "Yes", False),
        Row("Detail", '{\n  "a": [\n    1,\n    {\n      "b": 2\n    }\n  ]\n}', True),
    ]
    assert rows("approved", "Result") == [Row("Result", "approved", False)]


def test_a_list_of_like_records_is_a_table_and_a_flat_record_one_line() -> None:
    items = [{"sku": "A1", "ok": True}, {"sku": "B2", "note": "late"}]
    (found,) = rows({"items": items})
    assert (found.columns, found.cells) == (["SKU", "Ok", "Note"], [["A1", "Yes", ""], ["B2", "", "late"]])
    assert rows({"counts": {"approved": 3, "passed": 1}}) == [Row("Counts", "Approved: 3 · Passed: 1", False)]


def test_long_or_multi_line_text_is_a_block_of_its_own() -> None:
    draft = "# Title\n\nBody"
    assert rows({"draft": draft, "round": 1}) == [
        Row("Draft", draft, True, markdown=True),  # written in Markdown: shown formatted
        Row("Round", "1", False, number=True),
    ]
    assert rows({"note": "plain words\non two lines"}) == [Row("Note", "plain words\non two lines", True)]


def test_inbox_shows_a_draft_as_a_wide_block(operator_client: Client, start_run) -> None:
    start_run("document_review", {"title": "Caching", "topic": "caches"})
    html = operator_client.get(reverse("inbox")).content.decode()
    assert '<dt class="wide">Draft</dt><dd class="wide"><div class="markdown"><h1>Caching</h1>' in html


def test_batch_output_shows_a_table_of_outcomes(operator_client: Client, start_run) -> None:
    items = [{"sku": "A1", "price": 3, "flagged": False}, {"sku": "B2", "price": 4, "flagged": False}]
    run = start_run("batch_review", {"items": items})
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    output = html.split('id="run-output"', 1)[1].split("</dl>", 1)[0]
    assert '<th scope="col">Outcome</th>' in output
    assert "<td>A1</td>" in output and "<td>passed</td>" in output


def test_run_page_shows_output_and_answers_readably(operator_client: Client, start_run, advance) -> None:
    run = start_run(node_input={**BIG_EXPENSE, "amount": 500})
    (ask,) = pending(run)
    response = operator_client.post(
        reverse("answer", args=[ask.pk]), {"f.approved": "false", "f.comment": "too expensive"}
    )
    assert response.status_code in (200, 302)
    advance(run)
    html = operator_client.get(reverse("run", args=[run])).content.decode()
    assert "Rejected · Comment: too expensive" in html  # the timeline's answer line
    output = html.split('id="run-output"', 1)[1].split("</dl>", 1)[0]
    assert "<dt>Approved</dt><dd>No</dd>" in output
    assert '"approved": false' not in output


def test_timeline_lines_read_as_words() -> None:
    from wfapp.web.run_state import describe_event

    output = describe_event(
        5, 0.0, "output", "wf@1/item@1", "wf", {"output": {"sku": "A1", "outcome": "passed"}}
    )
    assert output.detail == "SKU: A1 · Outcome: passed"
    routed = describe_event(6, 0.0, "output", "wf@1/triage@1", "wf", {"output": "big", "route": "both"})
    assert (routed.title, routed.detail) == ("Output · Route", "Output: big · Route: both")
    assert '"route": "both"' in routed.full  # the exact value is one click away


def test_the_workflow_starting_again_reads_as_a_resume() -> None:
    from wfapp.web.run_state import describe_event

    assert describe_event(1, 0.0, "started", "wf@1", "wf", {}).title == "Run started"
    assert describe_event(14, 0.0, "started", "wf@1", "wf", {}).title == "Run resumed"
    assert describe_event(2, 0.0, "started", "wf@1/triage@1", "wf", {}).title == "Started"
