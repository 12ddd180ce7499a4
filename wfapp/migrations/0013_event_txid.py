"""PostgreSQL only: each log entry keeps the id of the transaction that wrote it (``txid``).

The inbox stream's positions are snapshots of which transactions had committed
(``wfapp.api.inbox_positions``); this column, filled by its default in every insert, says
which transaction an entry belongs to. Django's model does not know it: nothing else reads it.
SQLite needs nothing: its writers take turns, so entry ids follow the commit order.
"""

from django.db import migrations

# Two steps: a column added with a volatile default would rewrite the whole log table. Entries
# written before this migration keep NULL: no position made since covers or passes them (both
# tests are NULL), which is right, as they committed before any position could be made.
ADD = [
    "ALTER TABLE wfapp_event ADD COLUMN txid xid8",
    "ALTER TABLE wfapp_event ALTER COLUMN txid SET DEFAULT pg_current_xact_id()",
    "CREATE INDEX wfapp_event_txid ON wfapp_event (txid)",
]
DROP = ["DROP INDEX IF EXISTS wfapp_event_txid", "ALTER TABLE wfapp_event DROP COLUMN IF EXISTS txid"]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor != "postgresql":
            return
        for statement in statements:
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("wfapp", "0012_run_search_text")]

    operations = [migrations.RunPython(_run(ADD), _run(DROP))]
