"""PostgreSQL only: each log entry keeps the id of the transaction that wrote it (``txid``).

The inbox stream's positions are snapshots of which transactions had committed
(``wfapp.api.inbox_positions``); this column, filled by its default in every insert, says
which transaction an entry belongs to. Django's model does not know it: nothing else reads it.
SQLite needs nothing: its writers take turns, so entry ids follow the commit order.
"""

from django.db import migrations

ADD = [
    "ALTER TABLE wfapp_event ADD COLUMN txid xid8 NOT NULL DEFAULT pg_current_xact_id()",
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
