"""Row editors (arrays of objects): how many rows a submitted form has, and adding or removing one.

Each row posts a marker under the array's own name (`f.items` = "0", "1", ...) and its fields
under `f.items.<k>.<field>`. The Add and Remove buttons are plain submit buttons named `_rows`
("add:f.items", "remove:f.items:1"): the server answers with the same form, one row more or
less, and what was typed kept, so the editor works with htmx and without JavaScript alike.
Removing a row renumbers the rows after it, so indices stay contiguous.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from django.utils.datastructures import MultiValueDict

ACTION = "_rows"
MAX_ROWS = 200


class RowData(Protocol):
    """What the row editor needs of a submitted form (a Django `QueryDict` has it)."""

    def get(self, key: str, default: Any = None) -> Any: ...
    def getlist(self, key: str) -> list[Any]: ...
    def lists(self) -> Iterable[tuple[str, list[Any]]]: ...


@dataclass(frozen=True)
class RowEdit:
    """A row added to or removed from the rows named `name` (`index`: which, None if refused)."""

    verb: str
    name: str
    index: int | None


def row_count(data: Any, name: str) -> int:
    return min(len(data.getlist(name)), MAX_ROWS)


def _copy(data: RowData, skip: str = ACTION) -> MultiValueDict[str, Any]:
    copy: MultiValueDict[str, Any] = MultiValueDict()
    for key, values in data.lists():
        if key != skip:
            copy.setlist(key, list(values))
    return copy


def apply_edit[D: RowData](data: D) -> tuple[D | MultiValueDict[str, Any], RowEdit | None]:
    """The submitted data with the requested row added or removed, and the edit (None: a real submit)."""
    action = str(data.get(ACTION, "") or "")
    if not action:
        return data, None
    verb, _, rest = action.partition(":")
    if verb == "add":
        count = row_count(data, rest)
        edited = _copy(data)
        if count >= MAX_ROWS:
            return edited, RowEdit("add", rest, None)
        edited.setlist(rest, [str(k) for k in range(count + 1)])
        return edited, RowEdit("add", rest, count)
    name, _, index = rest.rpartition(":")
    count = row_count(data, name)
    if verb != "remove" or not index.isdigit() or int(index) >= count:
        return _copy(data), RowEdit(verb, name, None)
    return _without_row(data, name, int(index), count), RowEdit("remove", name, int(index))


def _without_row(data: RowData, name: str, gone: int, count: int) -> MultiValueDict[str, Any]:
    prefix = name + "."
    edited: MultiValueDict[str, Any] = MultiValueDict()
    for key, values in data.lists():
        if key == ACTION:
            continue
        if key == name:
            edited.setlist(key, [str(k) for k in range(count - 1)])
            continue
        if key.startswith(prefix):
            head, dot, tail = key[len(prefix) :].partition(".")
            if head.isdigit():
                k = int(head)
                if k == gone:
                    continue
                if k > gone:
                    key = f"{prefix}{k - 1}{dot}{tail}"
        edited.setlist(key, list(values))
    return edited
