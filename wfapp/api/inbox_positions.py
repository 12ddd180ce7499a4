"""The inbox stream's positions: which log entries a client has had the changes of, exactly.

A position names a set of log entries ("covered"); a resume reads every committed entry it does
not cover, and the changes they made (``inbox_changes``), so nothing is sent twice or missed.

Entry ids alone cannot say this on PostgreSQL: ids are drawn when a row is inserted, but
transactions commit in any order, so an entry with a lower id can commit after a higher one
was read (a position "every id up to N" would skip it for good). A position there is instead a
snapshot, ``pg_current_snapshot()`` of the read that made it (``xmin:xmax:in-flight,...``): it
covers the entries whose transaction it shows committed. Every entry keeps its transaction's
id (the ``txid`` column, migration 0013), so the entries a snapshot does not cover are those
with ``txid >= xmin`` (an index range) that it does not show committed, whatever their ids. A
transaction still open when a position was read is never covered by it, and is read on the
first look after it commits. Snapshots only grow: what one shows committed, every later one
does too. The price: a transaction left open for long holds ``xmin`` back, so each look scans
the index over every entry written since it began (those it shows committed are skipped).

Within one look the changes are sent in entry id order, each with its own position so that a
client cut off mid-way resumes after the last one it got: ``BASE~SNAPSHOT~ID`` covers what
``BASE`` covers plus the entries ``SNAPSHOT`` shows committed with an id up to ``ID``. A look's
last change and the ``ready`` frame carry the plain snapshot. A resume from ``BASE~S~ID`` first
sends the rest of that look (entries committed in ``S``, not covered by ``BASE``, id above
``ID``), then everything after ``S``.

A look reads at most ``PAGE`` entries at a time: after a full page the stream stands at that
page's last entry (``Batch.end``) and reads the next page from there, so ``after=0`` on a large
log reads it page by page instead of loading every entry id at once.

On SQLite writers take turns (one write transaction at a time), so ids follow the commit order
and a position is an entry id: it covers every id up to it. A plain id is accepted on
PostgreSQL too (``after=0``: everything), covering the ids up to it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from django.db import connection

from wfapp.api.problems import Problem
from wfapp.models import Event

NUMBER = "[0-9]{1,19}"
SNAPSHOT = re.compile(rf"({NUMBER}):({NUMBER}):((?:{NUMBER})(?:,{NUMBER})*)?")
TOKEN = r"^[0-9:,~]+$"  # what a position is made of (``after``'s pattern)
LIMIT = 2**63  # ids and transaction ids PostgreSQL can compare with
PAGE = 1000  # entries one read takes at most
MAX_TOKEN = 200_000  # characters: a snapshot lists the transactions in flight, rarely more than a few


@dataclass(frozen=True, slots=True)
class Upto:
    """Every entry with an id up to ``id``."""

    id: int

    def __str__(self) -> str:
        return str(self.id)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Every entry whose transaction the PostgreSQL snapshot ``text`` shows committed."""

    text: str

    def __str__(self) -> str:
        return self.text


Plain = Upto | Snapshot


@dataclass(frozen=True, slots=True)
class Partway:
    """``base``, plus the entries ``then`` covers with an id up to ``id`` (a look sent so far)."""

    base: Plain
    then: Plain
    id: int

    def __str__(self) -> str:
        return f"{self.base}~{self.then}~{self.id}"


Position = Plain | Partway
Entry = tuple[int, str, int]  # (id, run, seq)


def _number(text: str) -> int:
    if re.fullmatch(NUMBER, text) is None or int(text) >= LIMIT:
        raise ValueError(text)
    return int(text)


def _plain(text: str) -> Plain:
    if re.fullmatch(NUMBER, text) is not None:
        return Upto(_number(text))
    found = SNAPSHOT.fullmatch(text)
    if found is None or connection.vendor != "postgresql":
        raise ValueError(text)
    low, high = _number(found[1]), _number(found[2])
    running = [_number(x) for x in found[3].split(",")] if found[3] else []
    if not low <= high or any(not low <= x < high for x in running) or running != sorted(set(running)):
        raise ValueError(text)
    return Snapshot(text)


def parse(text: str) -> Position:
    """The position a client sent (``Last-Event-ID`` or ``after``); ``bad-request`` otherwise."""
    try:
        if len(text) > MAX_TOKEN:
            raise ValueError(text)
        parts = text.split("~")
        if len(parts) == 1:
            return _plain(parts[0])
        if len(parts) == 3:
            return Partway(_plain(parts[0]), _plain(parts[1]), _number(parts[2]))
        raise ValueError(text)
    except ValueError:
        raise Problem(
            "bad-request",
            "Last-Event-ID (or after) must be the id of the last change this stream sent.",
        ) from None


def current() -> Plain:
    """What the reading transaction sees: its snapshot (PostgreSQL) or its latest entry."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_snapshot()::text")
            return Snapshot(str(cursor.fetchone()[0]))
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT MAX(id) FROM {Event._meta.db_table}")
        return Upto(int(cursor.fetchone()[0] or 0))


def _covered(position: Plain) -> tuple[str, list[int | str]]:
    if isinstance(position, Upto):
        return "id <= %s", [position.id]
    return "pg_visible_in_snapshot(txid, %s::pg_snapshot)", [position.text]


def _beyond(position: Plain) -> tuple[str, list[int | str]]:
    """Not covered by ``position``, with the bound that lets the index find them."""
    if isinstance(position, Upto):
        return "id > %s", [position.id]
    sql = "txid >= pg_snapshot_xmin(%s::pg_snapshot) AND NOT pg_visible_in_snapshot(txid, %s::pg_snapshot)"
    return sql, [position.text, position.text]


def _entries(where: list[tuple[str, list[int | str]]]) -> list[Entry]:
    clauses = " AND ".join(f"({sql})" for sql, _ in where)
    params = [p for _, ps in where for p in ps]
    table = Event._meta.db_table
    with connection.cursor() as cursor:
        sql = f"SELECT id, session_id, seq FROM {table} WHERE {clauses} ORDER BY id LIMIT {PAGE}"
        cursor.execute(sql, params)
        return [(int(pk), str(run), int(seq)) for pk, run, seq in cursor.fetchall()]


@dataclass(frozen=True, slots=True)
class Batch:
    """New entries in id order, those ``then`` covers and ``base`` does not; once the changes
    placed at them are sent up to entry ``id``, the stream is at ``at(id)`` (at ``then`` after
    the last)."""

    entries: list[Entry]
    base: Plain
    then: Plain

    @property
    def full(self) -> bool:
        """A whole page: more entries may follow it (read them from ``end``)."""
        return len(self.entries) == PAGE

    @property
    def end(self) -> Position:
        """Where the stream stands once this batch's changes are sent."""
        return self.at(self.entries[-1][0]) if self.full else self.then

    def at(self, entry_id: int) -> Position:
        if isinstance(self.base, Upto) and isinstance(self.then, Upto):
            return Upto(entry_id)
        return Partway(self.base, self.then, entry_id)


def since(position: Position, now: Plain) -> list[Batch]:
    """The entries ``now`` covers that ``position`` does not, as the batches to send in order;
    the last one ``full`` when there are more (read them from its ``end``)."""
    batches = []
    if isinstance(position, Partway):  # the rest of the look the client was cut off from
        base, then = position.base, position.then
        rest = Batch(_entries([_beyond(base), _covered(then), ("id > %s", [position.id])]), base, then)
        batches.append(rest)
        if rest.full:
            return batches
        position = then
    batches.append(Batch(_entries([_beyond(position)]), position, now))
    return batches
