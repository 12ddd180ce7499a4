"""Move values between JSON and a widget tree: fill it for display, read a POST back into JSON.

Parsing never raises: what cannot be read (text in a number field, broken JSON) becomes a field
error, and the widget keeps the raw text so the page shows exactly what was typed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from decimal import Decimal, InvalidOperation
from typing import Any, Protocol

from engine import limits
from wfapp.schema_forms.rows import row_count
from wfapp.schema_forms.widgets import MISSING, Widget, choice_value, path_key


class FormData(Protocol):
    """What a Django `QueryDict` offers and the parser needs."""

    def get(self, key: str, default: Any = None) -> Any: ...
    def getlist(self, key: str) -> list[Any]: ...
    def lists(self) -> Iterable[tuple[str, list[Any]]]: ...
    def __contains__(self, key: object) -> bool: ...


Errors = dict[str, list[str]]


def show_value(w: Widget, value: Any) -> None:
    """Fill `w` (and its children) for display from a JSON value, or the schema defaults."""
    if value is MISSING:
        value = w.default
    if w.kind == "fieldset":
        for child in w.children:
            key = child.path[-1]
            child_value = value.get(key, MISSING) if isinstance(value, dict) else MISSING
            show_value(child, child_value)
        return
    if w.kind == "rows":
        items = value if isinstance(value, list) else []
        least = w.schema["minItems"] if isinstance(w.schema.get("minItems"), int) else 0
        count = max(len(items), least, 1 if w.required else 0)
        _make_rows(w, count)
        for k, row in enumerate(w.children):
            show_value(row, items[k] if k < len(items) else MISSING)
        return
    if value is MISSING or (value is None and w.kind not in ("select", "radio", "json")):
        w.value = [] if w.kind == "checkboxes" else (False if w.kind == "checkbox" else "")
        return
    w.value = _display(w, value)


def _display(w: Widget, value: Any) -> Any:
    if w.kind == "checkbox":
        return value is True
    if w.kind in ("select", "radio"):
        if value is None and not any(c.data is None for c in w.choices):
            return ""
        all_strings = all(isinstance(c.data, str) for c in w.choices)
        return choice_value(value, all_strings)
    if w.kind == "checkboxes":
        all_strings = all(isinstance(c.data, str) for c in w.choices)
        return [choice_value(v, all_strings) for v in value] if isinstance(value, list) else []
    if w.kind == "lines":
        return "\n".join(str(v) for v in value) if isinstance(value, list) else ""
    if w.kind == "json":
        return json.dumps(value, indent=2, ensure_ascii=False)
    if w.kind == "decision":
        return "true" if value is True else "false" if value is False else ""
    return str(value)


def _make_rows(w: Widget, count: int) -> None:
    assert w.make_row is not None
    w.children = [w.make_row(k) for k in range(count)]


def keep_typed(w: Widget, data: FormData) -> None:
    """Fill `w` for display with exactly what the browser sent."""
    if w.kind == "rows":
        _make_rows(w, row_count(data, w.name))
    if w.kind in ("fieldset", "rows"):
        for child in w.children:
            keep_typed(child, data)
    elif w.kind == "checkbox":
        w.value = w.name in data
    elif w.kind == "checkboxes":
        w.value = [str(v) for v in data.getlist(w.name)]
    else:
        w.value = str(data.get(w.name, "") or "")


def parse(w: Widget, data: FormData, errors: Errors) -> Any:
    """Return the JSON value `w` stands for in `data` (`MISSING` when left out)."""
    if w.kind == "fieldset":
        return _parse_object(w, data, errors)
    if w.kind == "rows":
        if not w.children:
            return [] if w.required else _empty(w)
        return [parse(row, data, errors) for row in w.children]
    if w.kind == "checkbox":
        return w.name in data
    if w.kind == "checkboxes":
        return _parse_checkboxes(w, data, errors)
    if w.kind == "decision":
        raw = data.get(w.name)
        if raw in ("true", "false"):
            return raw == "true"
        if raw:
            errors.setdefault(w.key, []).append("Choose Approve or Reject.")
        return MISSING
    raw = str(data.get(w.name, "") or "")
    if w.kind != "textarea":
        raw = raw.strip()
    if raw == "" or (w.kind == "lines" and not raw.strip()):
        return _empty(w)
    if "\x00" in raw:
        errors.setdefault(w.key, []).append("Remove the NUL character (\\0): it cannot be stored.")
        return MISSING
    try:
        return _PARSERS[w.kind](w, raw)
    except ValueError as exc:
        errors.setdefault(w.key, []).append(str(exc))
        return MISSING


def _empty(w: Widget) -> Any:
    if w.default is not MISSING:
        return w.default
    if w.nullable:
        return None
    if w.kind == "lines" and w.required:
        return []
    return MISSING


def _touched(w: Widget, data: FormData) -> bool:
    if w.kind in ("fieldset", "rows"):
        return any(_touched(c, data) for c in w.children)
    if w.kind == "checkboxes":
        return bool(data.getlist(w.name))
    return bool(str(data.get(w.name, "") or "").strip())


def _parse_object(w: Widget, data: FormData, errors: Errors) -> Any:
    if w.path and not w.required and not _touched(w, data):
        return _empty(w)
    result: dict[str, Any] = {}
    for child in w.children:
        value = parse(child, data, errors)
        if value is not MISSING:
            result[str(child.path[-1])] = value
    return result


def _parse_checkboxes(w: Widget, data: FormData, errors: Errors) -> Any:
    by_value = {c.value: c.data for c in w.choices}
    chosen = [str(v) for v in data.getlist(w.name)]
    unknown = [v for v in chosen if v not in by_value]
    if unknown:
        errors.setdefault(w.key, []).append("Choose only from the options shown.")
        return MISSING
    if not chosen and not w.required:
        return _empty(w)
    return [by_value[v] for v in chosen]


def _parse_choice(w: Widget, raw: str) -> Any:
    for choice in w.choices:
        if choice.value == raw:
            return choice.data
    raise ValueError("Choose one of the options.")


def parse_number(raw: str, integer: bool) -> int | float:
    """Read a number the way a person types it (`1,500.50` is refused: ambiguous)."""
    try:
        number = Decimal(raw)
    except InvalidOperation:
        raise ValueError("Enter a whole number." if integer else "Enter a number.") from None
    if not number.is_finite():
        raise ValueError("Enter a finite number.")
    if integer:
        if number != number.to_integral_value() or "." in raw or "e" in raw.lower():
            raise ValueError("Enter a whole number.")
        return int(number)
    if number == number.to_integral_value() and "." not in raw and "e" not in raw.lower():
        return int(number)
    result = float(number)
    if math.isinf(result):
        raise ValueError("Enter a smaller number.")
    return result


def _parse_number(w: Widget, raw: str) -> Any:
    return parse_number(raw, w.schema.get("type") == "integer")


def _parse_lines(w: Widget, raw: str) -> Any:
    item = w.schema.get("items") or {}
    lines = [line.strip() for line in raw.splitlines() if line.strip()]
    if item.get("type") == "string":
        return lines
    values = []
    for number, line in enumerate(lines, 1):
        try:
            values.append(parse_number(line, item.get("type") == "integer"))
        except ValueError as exc:
            raise ValueError(f"Line {number}: {exc}") from None
    return values


def keep_decimal_text(root: Widget, value: Any, data: FormData) -> Any:
    """Give decimal fields (pydantic's `Decimal`: a number or a string) the text typed, as a string.

    A JSON number loses what a person wrote: 12.50 comes back 12.5. The form validates the
    number; the value sent on is its text, normalized (`1e3` is "1000") with trailing zeros kept,
    which a `Decimal` reads back exactly.
    """
    for w in root.walk():
        if w.kind != "number" or not w.decimal:
            continue
        try:
            number = Decimal(str(data.get(w.name, "") or "").strip())
        except InvalidOperation:
            continue
        if number.is_finite():
            value = _replace(value, w.path, format(number, "f"))
    return value


def _replace(value: Any, path: tuple[str | int, ...], new: Any) -> Any:
    """`value` with the item at `path` replaced by `new`, when it is there (in place)."""
    if not path:
        return new if isinstance(value, int | float) and not isinstance(value, bool) else value
    parent = value
    for part in path[:-1]:
        try:
            parent = parent[part]
        except (KeyError, IndexError, TypeError):
            return value
    last = path[-1]
    try:
        current = parent[last]
    except (KeyError, IndexError, TypeError):
        return value
    if isinstance(current, int | float) and not isinstance(current, bool):
        parent[last] = new
    return value


def _parse_json(w: Widget, raw: str) -> Any:
    """Parse a JSON field; what parses must fit the log at the field's place in the value."""
    room = limits.current().max_depth - len(w.path)  # the objects and lists around the field
    try:
        value = json.loads(raw)
    except RecursionError:
        raise ValueError(f"This JSON is nested too deeply: at most {room} levels fit here.") from None
    except json.JSONDecodeError as exc:
        raise ValueError(f"Enter valid JSON ({exc.msg}, line {exc.lineno}, column {exc.colno}).") from None
    breach = limits.find_breach(value, max_depth=max(room, 0), max_bytes=limits.current().max_input_bytes)
    if breach is not None and breach.rule == "depth":
        raise ValueError(f"This JSON is nested {breach.found} levels deep: at most {room} levels fit here.")
    if breach is not None:
        raise ValueError(breach.describe("This JSON") + ".")
    return value


def nearest_key(root: Widget, path: tuple[str | int, ...]) -> str:
    """The error key of the widget that holds the value at `path` (the whole form's at worst)."""
    keys = {w.key for w in root.walk()}
    for end in range(len(path), 0, -1):
        key = path_key(path[:end])
        if key in keys:
            return key
    return root.key


_PARSERS = {
    "text": lambda w, raw: raw,
    "textarea": lambda w, raw: raw,
    "select": _parse_choice,
    "radio": _parse_choice,
    "number": _parse_number,
    "lines": _parse_lines,
    "json": _parse_json,
}
