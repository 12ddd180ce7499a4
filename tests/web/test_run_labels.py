"""A run's summary and outcome in words (issue 27, item 7): the defaults from the input and
output, a workflow's own format string or function, and a failing one falling back."""

from __future__ import annotations

from typing import Any

import pytest

from wfapp import run_labels
from wfapp.run_labels import default_outcome, default_summary, label_runs, outcome_of, summary_of

SCHEMA = {
    "properties": {
        "employee": {"type": "string"},
        "amount": {"anyOf": [{"type": "number"}, {"type": "string"}]},
        "category": {"type": "string"},
        "description": {"type": "string"},
    }
}


def test_the_default_summary_is_the_inputs_first_short_fields_the_first_text_leading() -> None:
    expense = {
        "description": "Flights to Oslo and back",
        "employee": "Ana",
        "amount": "2300.5",
        "category": "travel",
    }
    assert default_summary(expense, SCHEMA) == "Ana: 2,300.50 travel"
    assert default_summary({"count": 12000, "note": "x" * 80}) == "12,000"
    assert default_summary("just a text") == "just a text"
    assert default_summary([1, 2]) == ""


@pytest.mark.parametrize(
    ("output", "said"),
    [
        ({"approved": False, "comment": "no"}, "rejected"),
        ({"approved": True}, "approved"),
        ({"status": "shipped", "approved": True}, "shipped"),
        ("escalated", "escalated"),
        ({"total": 3}, None),
        ("x" * 80, None),
    ],
)
def test_the_default_outcome_reads_the_output(output: Any, said: str | None) -> None:
    assert default_outcome(output) == said


@pytest.fixture
def labelled() -> Any:
    yield
    run_labels._LABELS.pop("labelled_flow", None)


def test_a_workflows_own_labels_and_a_failing_one_falling_back(labelled: None, db: None) -> None:
    label_runs(
        "labelled_flow", summary="Order {order}: {total:,.2f}", outcome=lambda out: out["state"].upper()
    )
    assert summary_of("labelled_flow", None, {"order": "A-7", "total": "1234.5"}) == "Order A-7: 1,234.50"
    assert outcome_of("labelled_flow", None, "completed", {"state": "paid"}) == "PAID"
    assert outcome_of("labelled_flow", None, "failed", {"state": "paid"}) is None  # only a completed run
    # A field the format does not find, an output the function cannot read: the defaults.
    assert summary_of("labelled_flow", None, {"customer": "Bo", "total": 5}) == "Bo: 5"
    assert outcome_of("labelled_flow", None, "completed", {"approved": True}) == "approved"
    assert len(summary_of("labelled_flow", None, {"order": "x" * 300, "total": 1})) == run_labels.SUMMARY_MAX
