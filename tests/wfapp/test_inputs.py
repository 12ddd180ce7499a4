"""Checking caller input against a JSON Schema: one message per problem, at the field it concerns."""

from __future__ import annotations

from wfapp.runs.inputs import schema_errors

SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "string"}, "b": {"type": "string"}, "n": {"type": "number"}},
    "required": ["a", "b", "n"],
}


def test_each_missing_field_is_named_once() -> None:
    assert schema_errors(SCHEMA, {"n": 1}) == {
        "a": ["This field is required."],
        "b": ["This field is required."],
    }


def test_nested_missing_fields_carry_their_path() -> None:
    schema = {"type": "object", "properties": {"x": SCHEMA}, "required": ["x"]}
    assert schema_errors(schema, {"x": {"a": "1"}}) == {
        "x.b": ["This field is required."],
        "x.n": ["This field is required."],
    }
