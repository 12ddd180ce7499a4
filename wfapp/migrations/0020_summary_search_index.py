"""The runs list's text search reads a run's summary too: on PostgreSQL a trigram index serves
it (``wfapp.store.search_index``), as the one on ``search_text`` serves the input and output."""

from django.db import migrations

from wfapp.store import search_index


class Migration(migrations.Migration):
    dependencies = [
        ("wfapp", "0019_dayside_names_mentions"),
    ]

    operations = [
        migrations.RunPython(search_index.set_up_summary, search_index.tear_down_summary, elidable=False),
    ]
