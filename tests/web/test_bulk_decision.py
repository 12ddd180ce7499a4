"""Which interrupt schemas allow bulk approve / reject, and the answers they produce."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel

from wfapp.schema_forms.form import bulk_decision


class Expense(BaseModel):
    approved: bool
    comment: str = ""


class Review(BaseModel):
    approve: bool


class Verdict(BaseModel):
    decision: Literal["approve", "reject", "escalate"]
    note: str | None = None


class NeedsReason(BaseModel):
    approved: bool
    reason: str


class Amount(BaseModel):
    amount: int


@pytest.mark.parametrize(
    ("schema", "approve", "reject"),
    [
        pytest.param(Expense.model_json_schema(), {"approved": True, "comment": ""},
                     {"approved": False, "comment": ""}, id="expense"),
        pytest.param(Review.model_json_schema(), {"approve": True}, {"approve": False}, id="batch-review"),
        pytest.param(Verdict.model_json_schema(), {"decision": "approve", "note": None},
                     {"decision": "reject", "note": None}, id="enum"),
        pytest.param({"type": "boolean"}, True, False, id="bare-boolean"),
    ],
)  # fmt: skip
def test_bulk_answers(schema, approve, reject) -> None:
    bulk = bulk_decision(schema)
    assert bulk is not None
    assert bulk.answer(True) == approve
    assert bulk.answer(False) == reject


@pytest.mark.parametrize(
    "schema",
    [
        pytest.param(NeedsReason.model_json_schema(), id="second-required-field"),
        pytest.param(Amount.model_json_schema(), id="not-a-decision"),
        pytest.param({"type": "object", "properties": {"ok": {"type": ["boolean", "null"]}}, "required": ["ok"]},
                     id="nullable-boolean"),
        pytest.param({"type": "object", "properties": {"ok": {"enum": ["yes", "maybe"]}}, "required": ["ok"]},
                     id="enum-without-reject"),
        pytest.param({"type": "object", "properties": {"ok": {"type": "boolean"}, "n": {"type": "integer",
                      "default": "x"}}, "required": ["ok"]}, id="default-fails-schema"),
        pytest.param(None, id="no-schema"),
        pytest.param({"type": "string"}, id="string"),
    ],
)  # fmt: skip
def test_no_bulk_answer(schema) -> None:
    assert bulk_decision(schema) is None
