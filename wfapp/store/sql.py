"""The append's SQL: one conditional update of the session row and multi-row inserts of events.

Shared by ``DjangoEventStore``'s thread path (Django's cursor, ``%s`` parameters) and the
inline SQLite path (``sqlite3``'s own cursor, ``?`` parameters). Plain SQL rather than the
ORM: building the ORM's queries cost several times SQLite's own work for these two statements.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from engine import Event
from wfapp.models import Event as EventRow
from wfapp.models import Session

# How stale a run's updated_at may be while it appends (ChangeWatch looks back further).
UPDATED_AT_GRAIN = timedelta(seconds=1)
INSERT_ROWS = 500  # events per INSERT statement: well under every backend's parameter limit
_EVENT_COLUMNS = ("session_id", "seq", "kind", "node_path", "author", "invocation_id", "timestamp", "data")
# Stored in their own columns; everything else of an event goes to ``data``.
_DATA_EXCLUDES = {"seq", "session_id", "kind", "node_path", "author", "invocation_id", "timestamp"}


def event_params(session_id: str, events: Sequence[Event]) -> list[Any]:
    """The parameters of ``insert_events(len(events))``, row after row."""
    params: list[Any] = []
    for event in events:
        params += (*_columns(session_id, event, time.time()), _data(event))
    return params


def _columns(session_id: str, event: Event, stamp: float) -> tuple[Any, ...]:
    """An event's own columns, in the order the inserts list them (``data`` follows)."""
    return (
        session_id,
        event.seq,
        event.kind,
        event.node_path,
        event.author,
        event.invocation_id,
        event.timestamp or stamp,
    )


def _data(event: Event) -> str:
    return event.model_dump_json(exclude=_DATA_EXCLUDES, exclude_none=True)


def group_rows(session_id: str, events: Sequence[Event], lease: tuple[str, int] | None) -> tuple[str, str]:
    """A run's part of ``group_append``'s two JSON arrays: its session row's and its events'.

    The events' ``data`` goes in as it is dumped (no second encoding); timestamps are printed
    with ``repr``'s 17 digits, so they read back exactly.
    """
    owner, epoch = lease or (None, None)
    expected = events[0].seq - 1
    row = json.dumps([session_id, expected, expected + len(events), owner, epoch])
    stamp = time.time()
    rows = []
    for event in events:
        head = json.dumps(_columns(session_id, event, stamp))
        rows.append(f"{head[:-1]},{_data(event)}]")
    return row, ",".join(rows)


def group_append(quote: Callable[[str], str]) -> str:
    """PostgreSQL: several runs' appends as one statement, so one round trip and one commit.

    The same text for any number of runs (the rows come as two JSON arrays, decoded by the
    server: psycopg's own adaptation of a dozen arrays cost more than the rest of the append),
    so it is planned once per connection. Parameters: the session rows (``group_rows``' first
    parts, a JSON array), ``touch_times(now, False)``, the events (its second parts, a JSON
    array). Only the events of runs whose row matched are inserted; returns those runs' ids.
    """
    q = quote
    touched = q("updated_at")
    types = ("varchar", "bigint", "varchar", "varchar", "varchar", "varchar", "float8")
    picked = ", ".join(f"(e ->> {n})::{kind}" for n, kind in enumerate(types)) + ", (e -> 7)::jsonb"
    return (
        "WITH v AS (SELECT r ->> 0 AS id, (r ->> 1)::bigint AS expected, (r ->> 2)::bigint AS new, "
        "r ->> 3 AS owner, (r ->> 4)::bigint AS epoch FROM json_array_elements(%s::json) AS r), "
        f"u AS (UPDATE {q(Session._meta.db_table)} AS s SET {q('last_seq')} = v.new, {touched} = "
        f"CASE WHEN s.{touched} < %s THEN %s ELSE s.{touched} END FROM v "
        f"WHERE s.{q('id')} = v.id AND s.{q('last_seq')} = v.expected AND (v.owner IS NULL OR "
        f"(s.{q('lease_owner')} = v.owner AND s.{q('lease_epoch')} = v.epoch)) RETURNING s.{q('id')}), "
        f"i AS (INSERT INTO {q(EventRow._meta.db_table)} ({', '.join(map(q, _EVENT_COLUMNS))}) "
        f"SELECT {picked} FROM json_array_elements(%s::json) AS e "
        f"WHERE e ->> 0 IN (SELECT {q('id')} FROM u)) "
        f"SELECT {q('id')} FROM u"
    )


def touch_times(now: datetime, status_changes: bool) -> list[datetime]:
    """The updated_at parameters of ``update_session``."""
    return [now] if status_changes else [now - UPDATED_AT_GRAIN, now]


class AppendSQL:
    """The append's statements for one database vendor and parameter style, built once per shape."""

    def __init__(self, vendor: str, quote: Callable[[str], str], param: str = "%s") -> None:
        self.param = param
        self.json = f"{param}::jsonb" if vendor == "postgresql" else param
        self.quote = quote
        self._updates: dict[tuple[tuple[str, ...], bool], str] = {}
        self._inserts: dict[int, str] = {}

    def update_session(self, columns: tuple[str, ...], scoped: bool) -> str:
        """SET last_seq, updated_at and ``columns`` WHERE id, last_seq (and the lease when scoped).

        Parameters: last_seq, ``touch_times(...)``, the columns' values, id, expected last_seq,
        then lease owner and epoch when scoped.
        """
        key = (columns, scoped)
        sql = self._updates.get(key)
        if sql is None:
            q, p = self.quote, self.param
            touched = q("updated_at")
            if "status" in columns:
                touch = f"{touched} = {p}"
            else:
                # Within a second of the last touch, leave updated_at (and its two indexes) be:
                # a busy run's append then rewrites one row, not two index entries too.
                touch = f"{touched} = CASE WHEN {touched} < {p} THEN {p} ELSE {touched} END"
            sets = ", ".join([f"{q('last_seq')} = {p}", touch, *(f"{q(c)} = {p}" for c in columns)])
            where = f"{q('id')} = {p} AND {q('last_seq')} = {p}"
            if scoped:
                where += f" AND {q('lease_owner')} = {p} AND {q('lease_epoch')} = {p}"
            sql = f"UPDATE {q(Session._meta.db_table)} SET {sets} WHERE {where}"
            self._updates[key] = sql
        return sql

    def insert_rows(self, rows: list[tuple[str, Sequence[Event]]]) -> Iterator[tuple[str, list[Any]]]:
        """The INSERT statements of several sessions' events together, ``INSERT_ROWS`` at most each."""
        chunk: list[Any] = []
        count = 0
        for session_id, events in rows:
            for event in events:
                chunk += event_params(session_id, [event])
                count += 1
                if count == INSERT_ROWS:
                    yield self.insert_events(count), chunk
                    chunk, count = [], 0
        if count:
            yield self.insert_events(count), chunk

    def inserts(self, session_id: str, events: Sequence[Event]) -> Iterator[tuple[str, list[Any]]]:
        """The INSERT statements of a batch and their parameters, ``INSERT_ROWS`` events at most each."""
        for start in range(0, len(events), INSERT_ROWS):
            chunk = events[start : start + INSERT_ROWS]
            yield self.insert_events(len(chunk)), event_params(session_id, chunk)

    def insert_events(self, count: int) -> str:
        """INSERT ``count`` event rows (at most ``INSERT_ROWS``); parameters from ``event_params``."""
        sql = self._inserts.get(count)
        if sql is None:
            p = self.param
            row = f"({', '.join([p] * (len(_EVENT_COLUMNS) - 1))}, {self.json})"
            columns = ", ".join(map(self.quote, _EVENT_COLUMNS))
            sql = f"INSERT INTO {self.quote(EventRow._meta.db_table)} ({columns}) VALUES " + ", ".join(
                [row] * count
            )
            self._inserts[count] = sql  # at most INSERT_ROWS shapes
        return sql

    def select_events(self, limited: bool) -> str:
        """Each event after a seq as one JSON object, in order (parameters: id, seq[, limit]).

        The database merges the columns into ``data``, so the whole log parses in one go
        (``TypeAdapter(list[Event]).validate_json``) instead of row by row.
        """
        q, p = self.quote, self.param
        fields = ", ".join(f"'{c}', {q(c)}" for c in _EVENT_COLUMNS[:-2])
        if self.json == p:  # SQLite: data is JSON text; a REAL prints with 15 digits unless told 17
            fields += f", 'timestamp', json(printf('%!.17g', {q('timestamp')}))"
            merged = f"json_patch({q('data')}, json_object({fields}))"
        else:
            fields += f", 'timestamp', {q('timestamp')}"
            merged = f"({q('data')} || jsonb_build_object({fields}))::text"
        sql = (
            f"SELECT {merged} FROM {q(EventRow._meta.db_table)} "
            f"WHERE {q('session_id')} = {p} AND {q('seq')} > {p} ORDER BY {q('seq')}"
        )
        return f"{sql} LIMIT {p}" if limited else sql


_BY_VENDOR: dict[str, AppendSQL] = {}


def for_connection(conn: Any) -> AppendSQL:
    """The statements for a Django connection's vendor, with Django's ``%s`` parameters."""
    found = _BY_VENDOR.get(conn.vendor)
    if found is None:
        found = _BY_VENDOR[conn.vendor] = AppendSQL(conn.vendor, conn.ops.quote_name)
    return found
