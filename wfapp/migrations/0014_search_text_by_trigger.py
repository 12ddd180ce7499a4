"""PostgreSQL: ``search_text`` kept by a trigger on writes of input or output (``wfapp.store.search_index``).

A stored generated column is computed again on every update of its row, and each append
updates the run's row; the values stay as they are (no table rewrite). SQLite is unchanged.
"""

from django.db import migrations

from wfapp.store import search_index


class Migration(migrations.Migration):
    dependencies = [("wfapp", "0013_event_txid")]

    operations = [migrations.RunPython(search_index.maintain, search_index.generate, elidable=False)]
