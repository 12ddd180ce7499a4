"""Turn a JSON Schema into a tree of widgets to render.

Used for interrupt answers (`Interrupt.response_schema`) and start forms
(`workflow.input_json_schema`). The schema is usually pydantic's `model_json_schema()`;
`resolve` reduces its `$ref`/`anyOf` shapes first. An array of objects becomes a row
editor ("rows": one fieldset per item, built by the same builder, see `rows`). Anything a
form cannot express well (`oneOf`, free objects, arrays of arrays, recursive models, no schema
at all) becomes a JSON textarea checked against its sub-schema, so every schema is answerable.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from wfapp.schema_forms.resolve import Resolved, UnresolvableSchema, resolve
from wfapp.schema_forms.words import describe, example, field_label, humanize

MISSING: Any = type("Missing", (), {"__repr__": lambda self: "MISSING", "__bool__": lambda self: False})()

RADIO_MAX = 4  # enums with this many options or fewer show as radio buttons
TEXTAREA_MIN_LENGTH = 256  # strings allowed to be longer than this get a textarea
INPUT_TYPES = {"email": "email", "date": "date", "uri": "url", "url": "url"}
FORMAT_HINTS = {
    "date-time": "Date and time, e.g. 2026-01-31T09:30:00Z",
    "time": "Time, e.g. 09:30:00Z",
    "uuid": "A UUID",
}


@dataclass
class Choice:
    """One option of a select, radio group or checkbox group."""

    value: str  # as sent by the browser
    label: str
    data: Any  # the JSON value it stands for


@dataclass
class Widget:
    """One control (or a fieldset of controls) of a schema form."""

    kind: str  # text textarea number checkbox decision select radio checkboxes lines fieldset rows json
    path: tuple[str | int, ...]
    name: str
    id: str
    label: str
    schema: dict[str, Any]
    required: bool = False
    nullable: bool = False
    decimal: bool = False
    help: str = ""
    hint: str = ""
    input_type: str = "text"
    attrs: dict[str, str] = field(default_factory=dict)
    choices: list[Choice] = field(default_factory=list)
    children: list[Widget] = field(default_factory=list)
    default: Any = MISSING
    value: Any = ""
    errors: list[str] = field(default_factory=list)
    # Rows only: builds the fieldset of item `k`; the rows themselves are `children`.
    make_row: Callable[[int], Widget] | None = field(default=None, repr=False, compare=False)
    item_label: str = ""
    focus_add: bool = False  # after a row was removed, the Add button takes the focus

    @property
    def key(self) -> str:
        """The field path as used for error keys: `address.city`, `""` for the root."""
        return path_key(self.path)

    @property
    def template_name(self) -> str:
        return f"wfapp/forms/widgets.html#{self.kind}"

    @property
    def help_id(self) -> str:
        return f"{self.id}-help"

    @property
    def error_id(self) -> str:
        return f"{self.id}-error"

    @property
    def described_by(self) -> str:
        ids = []
        if self.help or self.hint:
            ids.append(self.help_id)
        if self.errors:
            ids.append(self.error_id)
        return " ".join(ids)

    @property
    def selected(self) -> set[str]:
        """Browser values currently chosen (for select, radio and checkbox groups)."""
        if isinstance(self.value, list):
            return {str(v) for v in self.value}
        return {str(self.value)}

    def walk(self) -> Iterator[Widget]:
        yield self
        for child in self.children:
            yield from child.walk()


def path_key(path: tuple[str | int, ...] | list[str | int]) -> str:
    return ".".join(str(p) for p in path)


def choice_value(data: Any, all_strings: bool) -> str:
    return str(data) if all_strings else json.dumps(data)


def _number_text(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


class _Builder:
    def __init__(self, root_schema: dict[str, Any], prefix: str, id_prefix: str) -> None:
        self.root_schema = root_schema
        self.prefix = prefix
        self.id_prefix = id_prefix
        self.count = 0
        self.fallback_label = "Answer"  # the whole value's label when its schema has no title

    def name(self, path: tuple[str | int, ...]) -> str:
        # Keys are quoted so that a key containing a dot cannot collide with a nested path.
        return "".join(
            [self.prefix, *(".{}".format(quote(str(p), safe="").replace(".", "%2E")) for p in path)]
        )

    def next_id(self) -> str:
        self.count += 1
        return f"{self.id_prefix}w{self.count}"

    def build(
        self,
        raw: Any,
        path: tuple[str | int, ...],
        label: str,
        required: bool,
        *,
        decision: bool = False,
        stack: tuple[str, ...] = (),
    ) -> Widget:
        own = raw if isinstance(raw, dict) else {}
        try:
            res = resolve(raw, self.root_schema, stack)
        except UnresolvableSchema:
            res = Resolved(dict(own), refs=stack)
            res.schema["x-unresolvable"] = True
        s = res.schema
        widget = Widget(
            kind="json",
            path=path,
            name=self.name(path),
            id=self.next_id(),
            label=self.label_for(path, own, s, label),
            schema=s,
            required=required,
            nullable=res.nullable,
            decimal=res.decimal,
            help=str(s.get("description") or ""),
            default=s.get("default", MISSING),
        )
        self.shape(widget, res, decision)
        return widget

    def label_for(
        self, path: tuple[str | int, ...], own: dict[str, Any], s: dict[str, Any], label: str
    ) -> str:
        """The field's own title (unless pydantic made it up), else its key in words (`label`),
        else its schema's title, else the fallback."""
        title = own.get("title")
        if title and path and isinstance(path[-1], str):
            return field_label(path[-1], title)
        return str(title or label or s.get("title") or self.fallback_label)

    def shape(self, w: Widget, res: Resolved, decision: bool) -> None:
        s = res.schema
        kind = s.get("type")
        if s.get("x-unresolvable") or s.get("readOnly"):
            w.kind = "json"
        elif "enum" in s or "const" in s:
            self.enum(w, s)
        elif kind == "boolean":
            if w.nullable:
                w.kind = "select"
                w.choices = [Choice("true", "Yes", True), Choice("false", "No", False)]
            else:
                w.kind = "decision" if decision else "checkbox"
        elif kind == "string":
            self.string(w, s)
        elif kind in ("integer", "number"):
            self.number(w, s, kind)
        elif kind == "object" and isinstance(s.get("properties"), dict) and s["properties"]:
            self.fieldset(w, s, res.refs)
        elif kind == "array":
            self.array(w, s, res.refs)
        else:
            w.kind = "json"
        if w.kind == "json":
            w.hint = "JSON" if not w.schema else f"JSON: {describe(w.schema, self.root_schema)}"
            sample = example(w.schema, self.root_schema)
            if sample is not None:
                w.attrs["placeholder"] = json.dumps(sample, ensure_ascii=False)

    def enum(self, w: Widget, s: dict[str, Any]) -> None:
        values = list(s["enum"]) if "enum" in s else [s["const"]]
        all_strings = all(isinstance(v, str) for v in values)
        names = s.get("x-enum-labels") or {}
        w.choices = [
            Choice(
                choice_value(v, all_strings), str(names.get(str(v), v if all_strings else json.dumps(v))), v
            )
            for v in values
        ]
        w.kind = "radio" if len(values) <= RADIO_MAX else "select"

    def string(self, w: Widget, s: dict[str, Any]) -> None:
        max_length = s.get("maxLength")
        long = s.get("x-widget") == "textarea" or (
            isinstance(max_length, int) and max_length > TEXTAREA_MIN_LENGTH
        )
        w.kind = "textarea" if long else "text"
        fmt = s.get("format")
        w.input_type = INPUT_TYPES.get(str(fmt), "text") if not long else "text"
        hints = []
        if isinstance(s.get("minLength"), int) and s["minLength"] > 0:
            w.attrs["minlength"] = str(s["minLength"])
        if isinstance(max_length, int):
            w.attrs["maxlength"] = str(max_length)
        low, high = w.attrs.get("minlength"), w.attrs.get("maxlength")
        if low == "1" and not high:
            pass  # "required" already says it
        elif low and high:
            hints.append(f"{low}–{high} characters")
        elif low or high:
            count = low or high
            hints.append(f"{'At least' if low else 'At most'} {count} character{'' if count == '1' else 's'}")
        if isinstance(s.get("pattern"), str) and not long:
            # JSON Schema patterns search; HTML patterns must match the whole value.
            w.attrs["pattern"] = f".*(?:{s['pattern']}).*"
            hints.append(f"Format: {s['pattern']}")
        if fmt in FORMAT_HINTS:
            hints.append(FORMAT_HINTS[str(fmt)])
        w.hint = "; ".join(hints)

    def number(self, w: Widget, s: dict[str, Any], kind: str) -> None:
        w.kind = "number"
        w.input_type = "number"
        integer = kind == "integer"
        hints = []
        if "minimum" in s:
            w.attrs["min"] = _number_text(s["minimum"])
            hints.append(f"at least {w.attrs['min']}")
        if "exclusiveMinimum" in s:
            low = s["exclusiveMinimum"]
            w.attrs["min"] = _number_text(low + 1 if integer and isinstance(low, int) else low)
            hints.append(f"greater than {_number_text(low)}")
        if "maximum" in s:
            w.attrs["max"] = _number_text(s["maximum"])
            hints.append(f"at most {w.attrs['max']}")
        if "exclusiveMaximum" in s:
            high = s["exclusiveMaximum"]
            w.attrs["max"] = _number_text(high - 1 if integer and isinstance(high, int) else high)
            hints.append(f"less than {_number_text(high)}")
        if "multipleOf" in s:
            w.attrs["step"] = _number_text(s["multipleOf"])
            hints.append(f"a multiple of {w.attrs['step']}")
        else:
            w.attrs["step"] = "1" if integer else "any"
        if integer:
            w.attrs["inputmode"] = "numeric"
        else:
            w.attrs["inputmode"] = "decimal"
        w.hint = ("A whole number" if integer else "A number") + (" " + ", ".join(hints) if hints else "")

    def fieldset(self, w: Widget, s: dict[str, Any], refs: tuple[str, ...]) -> None:
        w.kind = "fieldset"
        required = set(s.get("required") or [])
        props: dict[str, Any] = s["properties"]
        only = next(iter(required)) if len(required) == 1 else None
        root_decision = not w.path and only is not None
        for key, sub in props.items():
            is_decision = False
            if root_decision and key == only:
                try:
                    r = resolve(sub, self.root_schema, refs)
                    is_decision = r.schema.get("type") == "boolean" and not r.nullable
                except UnresolvableSchema:
                    pass
            w.children.append(
                self.build(
                    sub,
                    (*w.path, key),
                    humanize(key),
                    key in required,
                    decision=is_decision,
                    stack=refs,
                )
            )

    def array(self, w: Widget, s: dict[str, Any], refs: tuple[str, ...]) -> None:
        items = s.get("items")
        if "prefixItems" in s or not isinstance(items, dict):
            w.kind = "json"
            return
        try:
            item = resolve(items, self.root_schema, refs)
        except UnresolvableSchema:
            w.kind = "json"
            return
        i = item.schema
        if i.get("type") == "object" and isinstance(i.get("properties"), dict) and i["properties"]:
            if not item.nullable and not i.get("x-unresolvable"):
                self.rows(w, s, items, i, refs)
                return
            w.kind = "json"
            return
        if ("enum" in i or "const" in i) and not item.nullable:
            probe = Widget("radio", (), "", "", "", i)
            self.enum(probe, i)
            w.kind = "checkboxes"
            w.choices = probe.choices
        elif (
            i.get("type") in ("string", "integer", "number")
            and not item.nullable
            and (i.get("type") != "string" or "\n" not in str(i.get("pattern", "")))
        ):
            w.kind = "lines"
            w.hint = f"One {describe(i, self.root_schema)} per line"
        else:
            w.kind = "json"
            return
        w.schema = {**s, "items": i}
        counts = []
        if isinstance(s.get("minItems"), int) and s["minItems"] > 0:
            counts.append(f"at least {s['minItems']}")
        if isinstance(s.get("maxItems"), int):
            counts.append(f"at most {s['maxItems']}")
        if counts:
            extra = ("Choose " if w.kind == "checkboxes" else "") + " and ".join(counts)
            w.hint = "; ".join(h for h in (w.hint, extra) if h)

    def rows(
        self, w: Widget, s: dict[str, Any], raw_item: Any, item: dict[str, Any], refs: tuple[str, ...]
    ) -> None:
        """An array of objects: a fieldset per item, each built like any object; rows come later."""
        w.kind = "rows"
        w.schema = {**s, "items": item}
        w.item_label = str(item.get("title") or "Item")

        def make_row(k: int) -> Widget:
            row = self.build(raw_item, (*w.path, k), "", True, stack=refs)
            row.label = f"{w.item_label} {k + 1}"
            return row

        w.make_row = make_row
        counts = []
        if isinstance(s.get("minItems"), int) and s["minItems"] > 0:
            counts.append(f"at least {s['minItems']}")
        if isinstance(s.get("maxItems"), int):
            counts.append(f"at most {s['maxItems']}")
        if counts:
            w.hint = "Give " + " and ".join(counts) + f" {w.item_label.lower()}s"


def build_widgets(
    schema: dict[str, Any] | None, *, prefix: str = "f", id_prefix: str = "", root_label: str = "Answer"
) -> Widget:
    """Return the widget tree for `schema` (`None` means any JSON value); `root_label` names the whole value."""
    builder = _Builder(schema if isinstance(schema, dict) else {}, prefix, id_prefix)
    if schema is None:
        return Widget(
            "json", (), prefix, builder.next_id(), f"{root_label} (JSON)", {}, required=True, hint="JSON"
        )
    root_decision = False
    try:
        r = resolve(schema, schema)
        root_decision = r.schema.get("type") == "boolean" and not r.nullable and "enum" not in r.schema
    except UnresolvableSchema:
        pass
    builder.fallback_label = root_label
    return builder.build(schema, (), "", True, decision=root_decision)
