"""One row per JSON Schema construct: the widget chosen, and server-side validation of a POST."""

from __future__ import annotations

from decimal import Decimal
from enum import StrEnum
from typing import Any, Literal

import pytest
from django.utils.datastructures import MultiValueDict
from pydantic import BaseModel, Field

from wfapp.schema_forms.form import MISSING, SchemaForm


def post(**fields: Any) -> MultiValueDict:
    """Form data as a browser sends it: field `x` is posted as `f.x`."""
    data = MultiValueDict()
    for key, value in fields.items():
        name = "f" if key == "_root" else "f." + key.replace("__", ".")
        data.setlist(name, value if isinstance(value, list) else [value])
    return data


def one(sub: dict[str, Any], required: bool = True) -> dict[str, Any]:
    return {"type": "object", "properties": {"x": sub}, "required": ["x"] if required else []}


class Color(StrEnum):
    red = "red"
    green = "green"


class Address(BaseModel):
    city: str
    zip: str = Field(pattern=r"^\d{5}$")


class WithAddress(BaseModel):
    address: Address


class WithOptional(BaseModel):
    note: str | None = None
    count: int | None = Field(default=None, ge=1)


class Expense(BaseModel):
    amount: Decimal = Field(gt=0)


class WithEnumRef(BaseModel):
    color: Color


FIVE = ["a", "b", "c", "d", "e"]

# (id, schema, field key, widget kind, valid post, value, invalid post, error message, typed kept)
# fmt: off
ROWS: list[tuple[str, Any, str, str, dict, Any, dict, str, Any]] = [
    ("enum-radio", one({"enum": ["low", "high"]}), "x", "radio",
     {"x": "high"}, {"x": "high"}, {"x": "medium"}, "Choose one of the options.", "medium"),
    ("enum-select", one({"type": "string", "enum": FIVE}), "x", "select",
     {"x": "e"}, {"x": "e"}, {"x": "z"}, "Choose one of the options.", "z"),
    ("enum-numbers", one({"enum": [1, 2, 3]}), "x", "radio",
     {"x": "2"}, {"x": 2}, {"x": "9"}, "Choose one of the options.", "9"),
    ("enum-ref", WithEnumRef.model_json_schema(), "color", "radio",
     {"color": "green"}, {"color": "green"}, {"color": "blue"}, "Choose one of the options.", "blue"),
    ("boolean-checkbox", {"type": "object", "properties": {"a": {"type": "boolean"}, "x": {"type": "boolean"}},
                          "required": ["a", "x"]}, "x", "checkbox",
     {"x": "on"}, {"a": False, "x": True}, {}, None, None),
    ("boolean-decision", one({"type": "boolean"}), "x", "decision",
     {"x": "false"}, {"x": False}, {}, "Choose Approve or Reject.", ""),
    ("string-length", one({"type": "string", "minLength": 3, "maxLength": 5}), "x", "text",
     {"x": "abcd"}, {"x": "abcd"}, {"x": "ab"}, "Enter at least 3 characters.", "ab"),
    ("string-too-long", one({"type": "string", "maxLength": 5}), "x", "text",
     {"x": "abc"}, {"x": "abc"}, {"x": "abcdefgh"}, "Enter at most 5 characters.", "abcdefgh"),
    ("string-pattern", one({"type": "string", "pattern": "^[A-Z]{3}$"}), "x", "text",
     {"x": "EUR"}, {"x": "EUR"}, {"x": "euro"}, "Enter a value in the expected format (^[A-Z]{3}$).", "euro"),
    ("string-email", one({"type": "string", "format": "email"}), "x", "text",
     {"x": "ann@example.org"}, {"x": "ann@example.org"}, {"x": "ann"}, "Enter an email address.", "ann"),
    ("string-date", one({"type": "string", "format": "date"}), "x", "text",
     {"x": "2026-02-28"}, {"x": "2026-02-28"}, {"x": "2026-02-30"}, "Enter a date (YYYY-MM-DD).", "2026-02-30"),
    ("string-required", one({"type": "string"}), "x", "text",
     {"x": "hi"}, {"x": "hi"}, {"x": "  "}, "This field is required.", "  "),
    ("string-long", one({"type": "string", "maxLength": 5000}), "x", "textarea",
     {"x": "line 1\nline 2"}, {"x": "line 1\nline 2"}, {"x": "y" * 5001}, "Enter at most 5000 characters.",
     "y" * 5001),
    ("integer-range", one({"type": "integer", "minimum": 1, "maximum": 10}), "x", "number",
     {"x": "10"}, {"x": 10}, {"x": "11"}, "Enter a value of at most 10.", "11"),
    ("integer-not-whole", one({"type": "integer"}), "x", "number",
     {"x": "-4"}, {"x": -4}, {"x": "2.5"}, "Enter a whole number.", "2.5"),
    ("integer-exclusive", one({"type": "integer", "exclusiveMinimum": 0}), "x", "number",
     {"x": "1"}, {"x": 1}, {"x": "0"}, "Enter a value greater than 0.", "0"),
    ("number-multiple", one({"type": "number", "multipleOf": 0.5, "exclusiveMaximum": 100}), "x", "number",
     {"x": "2.5"}, {"x": 2.5}, {"x": "2.3"}, "Enter a multiple of 0.5.", "2.3"),
    ("number-text", one({"type": "number"}), "x", "number",
     {"x": "1e3"}, {"x": 1000.0}, {"x": "twelve"}, "Enter a number.", "twelve"),
    ("decimal-pydantic", Expense.model_json_schema(), "amount", "number",
     {"amount": "1500.50"}, {"amount": "1500.50"}, {"amount": "0"}, "Enter a value greater than 0.", "0"),
    ("nested-object", WithAddress.model_json_schema(), "address.zip", "text",
     {"address__city": "Oslo", "address__zip": "01500"}, {"address": {"city": "Oslo", "zip": "01500"}},
     {"address__city": "Oslo", "address__zip": "15"}, "Enter a value in the expected format (^\\d{5}$).", "15"),
    ("nested-required", WithAddress.model_json_schema(), "address.city", "text",
     {"address__city": "Oslo", "address__zip": "01500"}, {"address": {"city": "Oslo", "zip": "01500"}},
     {"address__zip": "01500"}, "This field is required.", ""),
    ("optional-anyof-null", WithOptional.model_json_schema(), "count", "number",
     {"note": "", "count": ""}, {"note": None, "count": None}, {"count": "0"}, "Enter a value of at least 1.", "0"),
    ("array-lines", one({"type": "array", "items": {"type": "string", "maxLength": 3}, "minItems": 1}), "x",
     "lines", {"x": "ab\n\ncd\n"}, {"x": ["ab", "cd"]}, {"x": "ab\nlong"}, "Line 2: Enter at most 3 characters.",
     "ab\nlong"),
    ("array-numbers", one({"type": "array", "items": {"type": "integer"}}), "x", "lines",
     {"x": "1\n2"}, {"x": [1, 2]}, {"x": "1\nx"}, "Line 2: Enter a whole number.", "1\nx"),
    ("array-empty-required", one({"type": "array", "items": {"type": "string"}, "minItems": 1}), "x", "lines",
     {"x": "a"}, {"x": ["a"]}, {"x": ""}, "Give at least 1 item.", ""),
    ("array-enum", one({"type": "array", "items": {"enum": ["r", "w", "x"]}, "uniqueItems": True}), "x",
     "checkboxes", {"x": ["r", "x"]}, {"x": ["r", "x"]}, {"x": ["r", "q"]}, "Choose only from the options shown.",
     ["r", "q"]),
    ("oneOf-json", one({"oneOf": [{"type": "string"}, {"type": "integer"}]}), "x", "json",
     {"x": "3"}, {"x": 3}, {"x": "[1]"}, "[1] is not valid under any of the given schemas", "[1]"),
    ("free-object-json", one({"type": "object"}), "x", "json",
     {"x": '{"a": [1, {"b": null}]}'}, {"x": {"a": [1, {"b": None}]}}, {"x": "{a: 1"},
     "Enter valid JSON (Expecting property name enclosed in double quotes, line 1, column 2).", "{a: 1"),
    ("additional-properties-json", one({"type": "object", "additionalProperties": {"type": "integer"}}), "x",
     "json", {"x": '{"a": 1}'}, {"x": {"a": 1}}, {"x": '{"a": "one"}'}, "At a: Enter a whole number.",
     '{"a": "one"}'),
    ("array-of-arrays-json", one({"type": "array", "items": {"type": "array", "items": {"type": "integer"}}}),
     "x", "json", {"x": "[[1, 2]]"}, {"x": [[1, 2]]}, {"x": '[["a"]]'}, "At 0.0: Enter a whole number.", '[["a"]]'),
    ("no-schema", None, "", "json", {"_root": '{"any": ["thing"]}'}, {"any": ["thing"]}, {"_root": "nope"},
     "Enter valid JSON (Expecting value, line 1, column 1).", "nope"),
    ("root-string", {"type": "string", "minLength": 2}, "", "text", {"_root": "ok"}, "ok", {"_root": "x"},
     "Enter at least 2 characters.", "x"),
    ("root-list", {"type": "array", "items": {"type": "string"}, "minItems": 1}, "", "lines", {"_root": "a\nb"},
     ["a", "b"], {"_root": ""}, "Give at least 1 item.", ""),
    ("root-boolean", {"type": "boolean"}, "", "decision", {"_root": "true"}, True, {}, "Choose Approve or Reject.", ""),
]
# fmt: on


def widget(form: SchemaForm, key: str):
    return next(w for w in form.widgets() if w.key == key)


@pytest.mark.parametrize(
    ("schema", "key", "kind", "good", "value", "bad", "message", "kept"),
    [pytest.param(*row[1:], id=row[0]) for row in ROWS],
)
def test_construct(schema, key, kind, good, value, bad, message, kept) -> None:
    assert widget(SchemaForm(schema), key).kind == kind

    valid = SchemaForm(schema, data=post(**good))
    assert valid.errors == {}
    assert valid.is_valid()
    assert valid.value == value

    if message is None:
        return
    invalid = SchemaForm(schema, data=post(**bad))
    assert not invalid.is_valid()
    assert invalid.errors[key] == [message]
    shown = widget(invalid, key)
    assert shown.errors == [message]
    assert shown.value == kept


def test_unbound_form_shows_defaults() -> None:
    schema = {
        "type": "object",
        "properties": {
            "comment": {"type": "string", "default": "looks fine"},
            "level": {"enum": ["a", "b"], "default": "b"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": ["x", "y"]},
            "urgent": {"type": "boolean", "default": True},
            "extra": {"type": "object", "default": {"k": 1}},
        },
    }
    form = SchemaForm(schema)
    assert not form.is_bound
    assert {w.key: w.value for w in form.widgets()} == {
        "": "",
        "comment": "looks fine",
        "level": "b",
        "tags": "x\ny",
        "urgent": True,
        "extra": '{\n  "k": 1\n}',
    }


def test_initial_value_overrides_defaults() -> None:
    form = SchemaForm(WithAddress.model_json_schema(), initial={"address": {"city": "Rome", "zip": "00100"}})
    assert widget(form, "address.city").value == "Rome"
    assert widget(form, "address").kind == "fieldset"


def test_labels_help_and_constraints_come_from_the_schema() -> None:
    schema = one(
        {
            "type": "string",
            "title": "Cost centre",
            "description": "Four digits",
            "maxLength": 4,
            "pattern": "^[0-9]+$",
        }
    )
    w = widget(SchemaForm(schema, id_prefix="i7-"), "x")
    assert (w.label, w.help, w.id, w.name) == ("Cost centre", "Four digits", "i7-w2", "f.x")
    assert w.attrs == {"maxlength": "4", "pattern": ".*(?:^[0-9]+$).*"}
    assert w.required


def test_labels_fall_back_to_the_key_not_the_referenced_model() -> None:
    w = widget(SchemaForm(WithEnumRef.model_json_schema()), "color")
    assert w.label == "Color"
    form = SchemaForm(
        {
            "type": "object",
            "properties": {"cost_centre": {"$ref": "#/$defs/C"}},
            "$defs": {"C": {"type": "string", "title": "C"}},
        }
    )
    assert widget(form, "cost_centre").label == "Cost centre"


def test_decision_form_submits_with_the_button_and_keeps_other_fields() -> None:
    schema = {
        "type": "object",
        "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string", "default": ""}},
        "required": ["approved"],
    }
    form = SchemaForm(schema)
    assert form.decision is not None and form.decision.name == "f.approved"
    assert [w.key for w in form.fields] == ["comment"]
    missing = SchemaForm(schema, data=post(comment="see receipt"))
    assert missing.errors == {"approved": ["Choose Approve or Reject."]}
    assert widget(missing, "comment").value == "see receipt"


def test_optional_nested_object_left_blank_is_omitted() -> None:
    schema = {
        "type": "object",
        "properties": {
            "addr": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
        },
    }
    form = SchemaForm(schema, data=post(addr__city=""))
    assert form.is_valid() and form.value == {}
    filled = SchemaForm(schema, data=post(addr__city="Oslo"))
    assert filled.value == {"addr": {"city": "Oslo"}}


def test_recursive_model_falls_back_to_json() -> None:
    class Node(BaseModel):
        name: str
        children: list[Node] = []

    form = SchemaForm(Node.model_json_schema(), data=post(name="root", children='[{"name": "leaf"}]'))
    assert widget(form, "children").kind == "json"
    assert form.value == {"name": "root", "children": [{"name": "leaf"}]}


def test_keys_with_dots_do_not_collide() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a.b": {"type": "string"},
            "a": {"type": "object", "properties": {"b": {"type": "string"}}},
        },
    }
    form = SchemaForm(schema)
    names = {w.path: w.name for w in form.widgets()}
    assert names[("a.b",)] != names[("a", "b")]
    assert len(set(names.values())) == len(names)


def test_unreadable_values_report_once_and_nothing_else() -> None:
    form = SchemaForm(one({"type": "integer", "minimum": 5}), data=post(x="five"))
    assert form.errors == {"x": ["Enter a whole number."]}


def test_literal_and_const() -> None:
    class M(BaseModel):
        mode: Literal["fast"]

    form = SchemaForm(M.model_json_schema(), data=post(mode="fast"))
    assert widget(form, "mode").kind == "radio"
    assert form.value == {"mode": "fast"}
    assert MISSING is not None and not MISSING


def test_json_fields_show_a_skeleton_to_fill_in() -> None:
    schema = one({"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/Item"}, {"type": "null"}]}})
    schema["$defs"] = {
        "Item": {
            "type": "object",
            "properties": {
                "sku": {"type": "string"},
                "kind": {"enum": ["a", "b"]},
                "qty": {"type": "integer", "default": 1},
            },
        }
    }
    assert widget(SchemaForm(schema), "x").attrs["placeholder"] == '[{"sku": "", "kind": "a", "qty": 1}]'
    assert "placeholder" not in widget(SchemaForm(one({})), "x").attrs


def test_every_missing_required_field_gets_its_own_error() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "string"}},
        "required": ["a", "b", "c"],
    }
    form = SchemaForm(schema, data=post(a="1"))
    assert form.errors == {"b": ["This field is required."], "c": ["This field is required."]}


def test_json_fields_say_in_words_what_they_want() -> None:
    class Item(BaseModel):
        sku: str
        price: Decimal
        flagged: bool

    class Batch(BaseModel):
        items: list[Item | None]  # a list that may hold nulls: no row editor for that

    form = SchemaForm(Batch.model_json_schema())
    (items,) = form.fields
    assert items.kind == "json"
    assert items.hint == "JSON: a list of objects with sku (text), price (number), flagged (true or false)"


def test_the_whole_value_is_named_by_the_caller() -> None:
    assert SchemaForm(None).root.label == "Answer (JSON)"
    assert SchemaForm({"type": "object"}, root_label="Input").root.label == "Input"


@pytest.mark.parametrize(
    ("typed", "sent"),
    [("12.50", "12.50"), (" 0.10 ", "0.10"), ("1e3", "1000"), ("7", "7"), ("-2.500", "-2.500")],
)
def test_a_decimal_is_sent_as_typed_with_its_trailing_zeros(typed: str, sent: str) -> None:
    class Price(BaseModel):
        price: Decimal
        items: list[Decimal] = []

    form = SchemaForm(Price.model_json_schema(), data=post(price=typed))
    assert form.is_valid(), form.errors
    assert form.value == {"price": sent, "items": []}
    assert Price.model_validate(form.value).price == Decimal(sent)
    assert str(Price.model_validate(form.value).price) == sent


def test_a_plain_number_stays_a_number_and_a_decimal_keeps_its_text_rules() -> None:
    assert SchemaForm(one({"type": "number"}), data=post(x="12.50")).value == {"x": 12.5}
    schema = one({"anyOf": [{"type": "number"}, {"type": "string", "pattern": r"^\d+(\.\d\d)?$"}]})
    form = SchemaForm(schema, data=post(x="-3"))
    assert not form.is_valid()
    assert form.errors == {"x": [r"Enter a value in the expected format (^\d+(\.\d\d)?$)."]}
    assert SchemaForm(schema, data=post(x="3.10")).value == {"x": "3.10"}


def test_a_decimal_shown_again_keeps_its_zeros() -> None:
    class Price(BaseModel):
        price: Decimal

    form = SchemaForm(Price.model_json_schema(), initial={"price": "12.50"})
    assert next(w for w in form.widgets() if w.key == "price").value == "12.50"


class Part(BaseModel):
    name: str
    qty: int = Field(default=1, ge=1)


class Line(BaseModel):
    sku: str = Field(min_length=1)
    price: Decimal = Field(ge=0)
    parts: list[Part] = []


class Order(BaseModel):
    lines: list[Line]
    note: str = ""


def rows_post(action: str = "", **fields: Any) -> MultiValueDict:
    data = post(**fields)
    if action:
        data["_rows"] = action
    return data


def test_an_array_of_objects_is_a_row_editor_with_one_fieldset_per_item() -> None:
    form = SchemaForm(Order.model_json_schema())
    lines = widget(form, "lines")
    assert lines.kind == "rows" and lines.item_label == "Line"
    (row,) = lines.children  # a required list starts with one blank row
    assert (row.kind, row.label, row.key) == ("fieldset", "Line 1", "lines.0")
    assert [(c.kind, c.name) for c in row.children] == [
        ("text", "f.lines.0.sku"),
        ("number", "f.lines.0.price"),
        ("rows", "f.lines.0.parts"),
    ]
    assert row.children[2].children == []  # an optional list starts empty

    shown = SchemaForm(
        Order.model_json_schema(), initial={"lines": [{"sku": "A"}, {"sku": "B", "price": "2.50"}]}
    )
    assert [w.value for w in shown.widgets() if w.key.endswith(("sku", "price"))] == ["A", "", "B", "2.50"]


def test_rows_are_read_back_and_errors_point_at_the_row_and_field() -> None:
    good = rows_post(lines=["0", "1"], lines__0__sku="A", lines__0__price="12.50",
                     lines__1__sku="B", lines__1__price="3", **{"lines__1__parts": ["0"]},
                     lines__1__parts__0__name="bolt", lines__1__parts__0__qty="4")  # fmt: skip
    form = SchemaForm(Order.model_json_schema(), data=good)
    assert form.is_valid(), form.errors
    assert form.value == {
        "lines": [
            {"sku": "A", "price": "12.50", "parts": []},
            {"sku": "B", "price": "3", "parts": [{"name": "bolt", "qty": 4}]},
        ],
        "note": "",
    }
    assert Order.model_validate(form.value).lines[0].price == Decimal("12.50")

    bad = rows_post(lines=["0", "1"], lines__0__sku="A", lines__0__price="1",
                    lines__1__sku="", lines__1__price="-1", **{"lines__1__parts": ["0"]},
                    lines__1__parts__0__qty="0")  # fmt: skip
    form = SchemaForm(Order.model_json_schema(), data=bad)
    assert not form.is_valid()
    assert form.errors == {
        "lines.1.sku": ["This field is required."],
        "lines.1.price": ["Enter a value of at least 0."],
        "lines.1.parts.0.name": ["This field is required."],
        "lines.1.parts.0.qty": ["Enter a value of at least 1."],
    }
    price = widget(form, "lines.1.price")
    assert (price.name, price.value, price.errors) == (
        "f.lines.1.price",
        "-1",
        ["Enter a value of at least 0."],
    )


def test_add_and_remove_rows_keep_what_was_typed_and_validate_nothing() -> None:
    typed = {"lines": ["0", "1", "2"], "lines__0__sku": "A", "lines__1__sku": "B", "lines__2__sku": "C",
             "lines__2__parts": ["0"], "lines__2__parts__0__name": "nut"}  # fmt: skip
    added = SchemaForm(Order.model_json_schema(), data=rows_post("add:f.lines", **typed))
    assert added.editing and not added.is_valid() and added.errors == {}
    rows = widget(added, "lines").children
    assert [r.children[0].value for r in rows] == ["A", "B", "C", ""]
    assert rows[3].children[0].attrs["autofocus"] == "autofocus"  # the new row's first field

    removed = SchemaForm(Order.model_json_schema(), data=rows_post("remove:f.lines:1", **typed))
    assert removed.editing and removed.errors == {}
    rows = widget(removed, "lines").children
    assert [(r.key, r.children[0].name, r.children[0].value) for r in rows] == [
        ("lines.0", "f.lines.0.sku", "A"),
        ("lines.1", "f.lines.1.sku", "C"),
    ]
    assert widget(removed, "lines.1.parts.0.name").value == "nut"  # a nested row moved along
    assert widget(removed, "lines").focus_add

    nested = SchemaForm(Order.model_json_schema(), data=rows_post("add:f.lines.2.parts", **typed))
    assert [
        w.value for w in nested.widgets() if w.key.startswith("lines.2.parts.") and w.key.endswith("name")
    ] == ["nut", ""]
    for action in ("remove:f.lines:9", "remove:f.lines:x", "bogus"):
        odd = SchemaForm(Order.model_json_schema(), data=rows_post(action, **typed))
        assert odd.editing and not odd.is_valid() and len(widget(odd, "lines").children) == 3
