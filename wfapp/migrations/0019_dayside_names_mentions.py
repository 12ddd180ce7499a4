"""Runs are called runs in the admin; a notice for a user mentioned in a comment (issue 27)."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wfapp', '0018_queue_run_summary'),
    ]

    operations = [
        migrations.AlterModelOptions(
            name='session',
            options={'ordering': ['-created_at'], 'permissions': [('start_run', 'Can start runs'), ('cancel_run', 'Can cancel runs'), ('retry_run', 'Can retry failed runs'), ('retry_with_edited_input', 'Can retry a failed node with an edited input')], 'verbose_name': 'run'},
        ),
        migrations.AlterField(
            model_name='notice',
            name='kind',
            field=models.CharField(choices=[('question', 'question created'), ('failed', 'run failed'), ('assigned', 'question assigned'), ('escalated', 'question escalated'), ('overdue', 'question about to be overdue'), ('mentioned', 'mentioned in a comment')], max_length=16),
        ),
    ]
