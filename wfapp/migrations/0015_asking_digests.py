"""Decisions bound to an asking (issue 24): the digest of what each asking shows, the asking
and digest each answer attempt was given to, and the outcome ``stale``."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('wfapp', '0014_search_text_by_trigger'),
    ]

    operations = [
        migrations.AddField(
            model_name='answerattempt',
            name='digest',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AddField(
            model_name='answerattempt',
            name='request_seq',
            field=models.BigIntegerField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='interrupt',
            name='digest',
            field=models.CharField(blank=True, default='', max_length=64),
        ),
        migrations.AlterField(
            model_name='answerattempt',
            name='outcome',
            field=models.CharField(choices=[('accepted', 'Accepted'), ('already_answered', 'Already Answered'), ('invalid', 'Invalid'), ('refused', 'Refused'), ('forbidden', 'Forbidden'), ('too_large', 'Too Large'), ('busy', 'Busy'), ('stale', 'Stale')], max_length=20),
        ),
    ]
