"""What the event log takes: how deep a value may nest, how large it may be, and only characters every database stores.

Every value the engine writes to the log (the start input, answers, node outputs, state
deltas, interrupt payloads, messages and schemas) passes ``check_input`` (values callers send)
or ``check_value`` (values nodes write) first, so whatever a store accepts it can read back.

The depth limit stays well below the strictest reader of the log. Measured with the pinned
libraries: pydantic's JSON parser (``TypeAdapter(list[Event]).validate_json``, which reads a
whole log at once) refuses values nested past 200 levels, and the log wraps a value in up to
3 more (the list of events, the event, the answer); pydantic's serializer refuses past 255,
SQLite's JSON functions past 1,999, Python's ``json`` and PostgreSQL's ``jsonb`` past ~9,990.
PostgreSQL refuses the NUL character in ``jsonb`` and text, and no database driver encodes an
unpaired surrogate; the rule is the same on every database, so a value is accepted or refused
alike everywhere.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, Literal

from pydantic_core import PydanticSerializationError, to_json

from .errors import ConfigurationError, ValueLimitError, WorkflowError

READABLE_DEPTH = 190  # the deepest limit allowed: below the log's strictest reader (see above)
DEFAULT_MAX_DEPTH = 64
DEFAULT_MAX_INPUT_BYTES = 64 * 1024
DEFAULT_MAX_VALUE_BYTES = 16 * 1024 * 1024  # PostgreSQL's jsonb itself stops at 255 MB

Rule = Literal["depth", "size", "character", "number"]


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits in force: nesting depth, and size in bytes of JSON for callers' and nodes' values."""

    max_depth: int = DEFAULT_MAX_DEPTH
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    max_value_bytes: int = DEFAULT_MAX_VALUE_BYTES

    def __post_init__(self) -> None:
        if not 1 <= self.max_depth <= READABLE_DEPTH:
            raise ConfigurationError(
                f"The nesting depth limit must be between 1 and {READABLE_DEPTH} (the log's readers "
                f"refuse deeper values); got {self.max_depth}"
            )
        for name in ("max_input_bytes", "max_value_bytes"):
            if getattr(self, name) < 1:
                raise ConfigurationError(f"The size limit {name} must be positive; got {getattr(self, name)}")


_current = Limits()


def current() -> Limits:
    return _current


def configure(**changes: int) -> Limits:
    """Change the limits of this process (``max_depth=...``, ...); return the previous ones."""
    global _current
    previous = _current
    _current = dataclasses.replace(_current, **changes)
    return previous


@dataclass(frozen=True, slots=True)
class Breach:
    """How a value breaks a limit, and where in it (a path of keys and indexes)."""

    rule: Rule
    limit: int
    found: int | None
    path: tuple[str | int, ...] = ()
    character: str = ""  # for "character": which one

    def describe(self, what: str) -> str:
        shown = [*self.path[:4], "…"] if len(self.path) > 4 else list(self.path)
        at = f" (at {_escape('.'.join(map(str, shown)))})" if self.path else ""
        if self.rule == "depth":
            found = f"{self.found} levels" if self.found is not None else f"more than {self.limit} levels"
            return f"{what} is nested {found} deep{at}; the limit is {self.limit} levels"
        if self.rule == "size":
            return f"{what} is {size_text(self.found or 0)} of JSON; the limit is {size_text(self.limit)}"
        if self.rule == "number":
            return f"{what} holds a number JSON cannot (NaN or Infinity){at}; use a finite number"
        return f"{what} contains {self.character}{at}, which cannot be stored; remove it"


def size_text(n: int) -> str:
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{round(n / 1024)} KB"
    return f"{n / (1024 * 1024):.1f} MB"


def _text_size(text: str) -> int | None:
    """The UTF-8 size of ``text``; None when it cannot be stored (a NUL, an unpaired surrogate)."""
    if text.isascii():
        return None if "\x00" in text else len(text)
    try:
        return None if "\x00" in text else len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return None


def _escape(text: str) -> str:
    if _text_size(text) is None:
        return text.replace("\x00", "\\u0000").encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def _bad_character(text: str) -> str:
    if "\x00" in text:
        return "a NUL character (\\u0000)"
    bad = next(c for c in text if 0xD800 <= ord(c) <= 0xDFFF)
    return f"an unpaired surrogate (\\u{ord(bad):04x})"


def _scalar_size(value: Any) -> int:
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, int):
        return value.bit_length() * 3 // 10 + 2  # its decimal digits, give or take one
    return len(repr(value)) if isinstance(value, float) else len(str(value))


_Link = tuple[Any, str | int] | None  # (parent link, key): a path without copying it at every level


def _path(link: _Link) -> tuple[str | int, ...]:
    parts: list[str | int] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


def find_breach(value: Any, *, max_depth: int, max_bytes: int) -> Breach | None:
    """The first limit ``value`` breaks: too deep, a character or number no database stores, too large.

    Size is that of the value's compact JSON text in UTF-8 (escapes not counted). The walk is
    iterative, so a value nested far past Python's recursion limit is measured too; scalars are
    measured in place and only containers go on the stack (this runs for every node output).
    A larger container that its JSON text shows to be within every limit is not walked.
    """
    if type(value) in _BIG and len(value) >= _FAST_FROM and _clearly_within(value, max_depth, max_bytes):
        return None
    return walk(value, max_depth=max_depth, max_bytes=max_bytes)


def walk(value: Any, *, max_depth: int, max_bytes: int) -> Breach | None:
    """``find_breach`` by walking the whole value."""
    deepest, size = 0, 0
    too_deep: list[_Link] = []  # where the first breach is, once found
    bad: list[tuple[_Link, str]] = []  # where the first text that cannot be stored is, and it
    odd: list[_Link] = []  # where the first number JSON cannot hold (NaN, Infinity) is
    stack: list[tuple[Any, int, _Link]] = [(value, 0, None)]
    while stack:
        item, depth, link = stack.pop()
        if isinstance(item, dict):
            children: Any = item.items()
        elif isinstance(item, list | tuple):
            children = enumerate(item)
        else:
            size += _leaf(item, link, bad, odd)
            continue
        depth += 1
        if depth > deepest:
            deepest = depth
            if depth > max_depth and not too_deep:
                too_deep.append(link)
        size += 1 + len(item)
        keyed = isinstance(item, dict)
        for key, child in children:
            if keyed:
                if type(key) is str and key.isascii() and "\x00" not in key:
                    size += len(key) + 3
                else:
                    key = key if isinstance(key, str) else str(key)
                    size += _leaf(key, (link, key), bad, odd) + 1
            kind = type(child)
            if kind is str and child.isascii() and "\x00" not in child:
                size += len(child) + 2
            elif kind is int:
                size += child.bit_length() * 3 // 10 + 2  # its decimal digits, give or take one
            elif kind is bool or child is None:
                size += 5
            else:  # a container, or a float or a non-ASCII text (measured when popped)
                stack.append((child, depth, (link, key)))
    if too_deep:
        return Breach("depth", max_depth, deepest, _path(too_deep[0]))
    if bad:
        return Breach("character", 0, None, _path(bad[0][0]), _bad_character(bad[0][1]))
    if odd:
        return Breach("number", 0, None, _path(odd[0]))
    if size > max_bytes:
        return Breach("size", max_bytes, size)
    return None


_BIG = (dict, list)
_FAST_FROM = 3  # items: below, walking costs less than serializing (measured on node outputs)


def _clearly_within(value: Any, max_depth: int, max_bytes: int) -> bool:
    """Whether ``value`` obviously breaks no limit, from its JSON text (serialized in Rust).

    Each test errs on the side of the full walk: every container adds a bracket, so no more
    brackets than ``max_depth`` means no deeper; the walk's size is at most 4x the text's (it
    counts an int of one digit as 3); a NUL is escaped as ``\\u0000``, NaN and Infinity are
    written as such, and an unpaired surrogate (or anything else odd) fails to serialize.
    """
    try:
        text = to_json(value)
    except (PydanticSerializationError, ValueError, TypeError, RecursionError):
        return False
    return (
        len(text) * 4 <= max_bytes
        and text.count(b"{") + text.count(b"[") <= max_depth
        and b"\\u0000" not in text
        and b"NaN" not in text
        and b"Infinity" not in text
    )


def _leaf(item: Any, link: _Link, bad: list[tuple[_Link, str]], odd: list[_Link]) -> int:
    """The JSON size of a scalar; note where it cannot be stored."""
    if isinstance(item, str):
        text_size = _text_size(item)
        if text_size is None:
            if not bad:
                bad.append((link, item))
            return 0
        return text_size + 2
    if type(item) is float and not math.isfinite(item) and not odd:
        odd.append(link)  # JSON has no NaN or Infinity: the databases refuse them
    return _scalar_size(item)


def check_input(value: Any, what: str) -> None:
    """Raise ``ValueLimitError`` (a caller error) when a value a caller sends breaks a limit."""
    limits = _current
    found = find_breach(value, max_depth=limits.max_depth, max_bytes=limits.max_input_bytes)
    if found is not None:
        raise ValueLimitError(found.describe(what), what, found.rule, found.limit, found.found, found.path)


def check_value(value: Any, what: str) -> None:
    """Raise ``WorkflowError`` (the node fails) when a value a node writes breaks a limit."""
    limits = _current
    found = find_breach(value, max_depth=limits.max_depth, max_bytes=limits.max_value_bytes)
    if found is not None:
        raise WorkflowError(found.describe(what))


def too_deep(what: str, *, caller: bool) -> Exception:
    """The error for a value nested too deeply to measure (inside models, say)."""
    found = Breach("depth", _current.max_depth, None)
    if caller:
        return ValueLimitError(found.describe(what), what, "depth", found.limit)
    return WorkflowError(found.describe(what))


def check_text(text: str, what: str) -> None:
    """``check_value`` for a string a node writes (a message, an interrupt id)."""
    if not text.isascii() or "\x00" in text or len(text) > _current.max_value_bytes // 4:
        check_value(text, what)


ID_CHARS = 200  # interrupt ids and actors' names: the database's columns hold this many


def check_id(text: str, what: str, *, caller: bool = False) -> None:
    """Refuse an id or name the database cannot keep (too long, a NUL, an unpaired surrogate)."""
    if len(text) > ID_CHARS:
        message = f"{what} is {len(text)} characters long; the limit is {ID_CHARS}"
        if caller:
            raise ValueLimitError(message, what, "size", ID_CHARS, len(text))
        raise WorkflowError(message)
    (check_input if caller else check_value)(text, what)


def safe_text(text: str) -> str:
    """``text`` as the log can always keep it: NUL and surrogates escaped, cut at the node value limit."""
    limit = _current.max_value_bytes // 4  # a character is at most 4 bytes of UTF-8
    text = _escape(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"
