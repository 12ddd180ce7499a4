"""The index behind the runs list's text search, one per database, and the filter that uses it.

`Session.search_text` is the run's input and output JSON in lower case, a column the database
keeps itself (generated on SQLite, filled by a trigger on PostgreSQL: below). PostgreSQL indexes it with a pg_trgm GIN index, which serves ``LIKE '%words%'``
as it is. SQLite has no such index for a plain table, so its triggers copy the column into an
FTS5 table with the trigram tokenizer, which serves ``GLOB '*words*'`` (GLOB, not LIKE: an
FTS5 LIKE with an ESCAPE clause is not answered from the index). Both answer exact substring
matches; words shorter than three characters are still exact, read without the index.

A migration that rebuilds the session table on SQLite drops its triggers: `SQLITE_SETUP` must
run again after it (the search tests fail without them).
"""

from __future__ import annotations

from typing import Any

from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.models import Q
from django.db.models.expressions import RawSQL

TABLE = "wfapp_session_text"

POSTGRESQL_SETUP = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE INDEX IF NOT EXISTS wfapp_session_search_trgm ON wfapp_session USING gin (search_text gin_trgm_ops)",
]
POSTGRESQL_TEARDOWN = ["DROP INDEX IF EXISTS wfapp_session_search_trgm"]
# A run's summary is searched beside `search_text` (``summary__icontains``, which PostgreSQL
# reads as UPPER(summary::text) LIKE ...): a trigram index on that expression serves it, so the
# two conditions are answered from two indexes (a bitmap OR) rather than by reading every run.
POSTGRESQL_SUMMARY_SETUP = [
    "CREATE INDEX IF NOT EXISTS wfapp_session_summary_trgm ON wfapp_session"
    " USING gin ((UPPER(summary::text)) gin_trgm_ops)",
]
POSTGRESQL_SUMMARY_TEARDOWN = ["DROP INDEX IF EXISTS wfapp_session_summary_trgm"]

# The FTS rows carry the run's id; a row is found again by it (GLOB narrows through the index,
# with the id's wildcards bracketed; = makes it exact) rather than by the session table's
# rowid, which VACUUM may renumber.
_ID_GLOB = "replace(replace(replace(OLD.id, '[', '[[]'), '*', '[*]'), '?', '[?]')"
_FIND = f"session_id GLOB {_ID_GLOB} AND session_id = OLD.id"
SQLITE_SETUP = [
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TABLE} USING fts5(session_id, body, tokenize='trigram case_sensitive 1')",
    f"DELETE FROM {TABLE}",
    f"INSERT INTO {TABLE} (session_id, body) SELECT id, search_text FROM wfapp_session",
    f"""CREATE TRIGGER IF NOT EXISTS wfapp_session_text_insert AFTER INSERT ON wfapp_session BEGIN
        INSERT INTO {TABLE} (session_id, body) VALUES (NEW.id, NEW.search_text); END""",
    f"""CREATE TRIGGER IF NOT EXISTS wfapp_session_text_update AFTER UPDATE OF input, output ON wfapp_session
        BEGIN DELETE FROM {TABLE} WHERE {_FIND};
        INSERT INTO {TABLE} (session_id, body) VALUES (NEW.id, NEW.search_text); END""",
    f"""CREATE TRIGGER IF NOT EXISTS wfapp_session_text_delete AFTER DELETE ON wfapp_session BEGIN
        DELETE FROM {TABLE} WHERE {_FIND}; END""",
]
# On PostgreSQL a stored generated column is computed again by every update of its row, and a
# run's row is updated by every append (last_seq): migration 0014 makes it a plain column that a
# trigger fills only when input or output are written. Django's model still calls it generated,
# so Django never writes it. SQLite keeps its generated column (the FTS5 triggers above fire on
# input and output only).
_SEARCH_TEXT = "lower(coalesce(NEW.input::text, '') || E'\\n' || coalesce(NEW.output::text, ''))"
POSTGRESQL_TRIGGER = [
    "ALTER TABLE wfapp_session ALTER COLUMN search_text DROP EXPRESSION",  # keeps the values, no rewrite
    f"""CREATE FUNCTION wfapp_session_search_text() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN NEW.search_text := {_SEARCH_TEXT}; RETURN NEW; END $$""",
    """CREATE TRIGGER wfapp_session_search_text BEFORE INSERT OR UPDATE OF input, output ON wfapp_session
        FOR EACH ROW EXECUTE FUNCTION wfapp_session_search_text()""",
]
POSTGRESQL_UNTRIGGER = [
    "DROP TRIGGER IF EXISTS wfapp_session_search_text ON wfapp_session",
    "DROP FUNCTION IF EXISTS wfapp_session_search_text()",
    "ALTER TABLE wfapp_session DROP COLUMN search_text",  # a generated column again (a rewrite)
    "ALTER TABLE wfapp_session ADD COLUMN search_text text GENERATED ALWAYS AS"
    f" ({_SEARCH_TEXT.replace('NEW.', '')}) STORED",
    *POSTGRESQL_SETUP[1:],
]
SQLITE_TEARDOWN = [
    "DROP TRIGGER IF EXISTS wfapp_session_text_insert",
    "DROP TRIGGER IF EXISTS wfapp_session_text_update",
    "DROP TRIGGER IF EXISTS wfapp_session_text_delete",
    f"DROP TABLE IF EXISTS {TABLE}",
]


def set_up(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """Create the index for this database (and fill it from the rows there are)."""
    _run(schema_editor, POSTGRESQL_SETUP, SQLITE_SETUP)


def tear_down(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, POSTGRESQL_TEARDOWN, SQLITE_TEARDOWN)


def set_up_summary(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """PostgreSQL: index the run's summary for the text search (SQLite reads the column)."""
    _run(schema_editor, POSTGRESQL_SUMMARY_SETUP, [])


def tear_down_summary(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    _run(schema_editor, POSTGRESQL_SUMMARY_TEARDOWN, [])


def _run(schema_editor: BaseDatabaseSchemaEditor, postgresql: list[str], sqlite: list[str]) -> None:
    vendor = schema_editor.connection.vendor
    statements = {"postgresql": postgresql, "sqlite": sqlite}.get(vendor)
    if statements is None:
        raise NotImplementedError(f"No run text index for the {vendor} database (PostgreSQL or SQLite).")
    for statement in statements:
        schema_editor.execute(statement)


def containing(vendor: str, words: str) -> Q:
    """Runs whose `search_text` contains `words` (already in lower case), through the index."""
    if vendor == "sqlite":
        pattern = "*" + "".join(f"[{c}]" if c in "*?[" else c for c in words) + "*"
        return Q(id__in=RawSQL(f"SELECT session_id FROM {TABLE} WHERE body GLOB %s", (pattern,)))
    return Q(search_text__contains=words)


def maintain(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    """PostgreSQL: keep `search_text` by trigger, on writes of input or output only."""
    if schema_editor.connection.vendor == "postgresql":
        _run(schema_editor, POSTGRESQL_TRIGGER, [])


def generate(apps: Any, schema_editor: BaseDatabaseSchemaEditor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        _run(schema_editor, POSTGRESQL_UNTRIGGER, [])
