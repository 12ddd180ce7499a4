"""A run's summary in words (``wfapp.run_labels``), made from its input when it starts.

Adding a column rebuilds the session table on SQLite, which drops the text index's triggers:
they are made again (``wfapp.store.search_index.set_up``; on PostgreSQL it changes nothing).
Runs started before this keep an empty summary.
"""

from django.db import migrations, models

from wfapp.store import search_index


class Migration(migrations.Migration):
    dependencies = [
        ("wfapp", "0017_api_token_limits"),
    ]

    operations = [
        migrations.AddField(
            model_name="session",
            name="summary",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
        migrations.RunPython(search_index.set_up, migrations.RunPython.noop, elidable=False),
    ]
