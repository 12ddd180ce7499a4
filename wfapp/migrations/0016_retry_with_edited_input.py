"""Issue 24, item 6: retrying a failed node with an edited input needs its own permission."""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('wfapp', '0015_asking_digests'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='session',
            options={'ordering': ['-created_at'], 'permissions': [('start_run', 'Can start runs'), ('cancel_run', 'Can cancel runs'), ('retry_run', 'Can retry failed runs'), ('retry_with_edited_input', 'Can retry a failed node with an edited input')]},
        ),
    ]
