"""Starting, cancelling and retrying runs get their own permissions.

Until now any logged-in user could do all three. Existing deployments keep working for the
people who operate runs: every group and user that holds ``answer_interrupt`` is granted the
three new permissions; everyone else (logged in, but without it) loses them. Superusers hold
every permission anyway. Grant them to others in the admin (Users or Groups).
"""

from django.conf import settings
from django.db import migrations, models

NEW = ("start_run", "cancel_run", "retry_run")


def grant_to_answerers(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    alias = schema_editor.connection.alias
    wfapp = apps.get_app_config("wfapp")
    wfapp.models_module = True  # create_permissions skips apps without models
    create_permissions(wfapp, apps=apps, verbosity=0, using=alias)
    wfapp.models_module = None
    permission = apps.get_model("auth", "Permission")
    answer = permission.objects.using(alias).filter(
        content_type__app_label="wfapp", codename="answer_interrupt"
    ).first()
    if answer is None:
        return
    new = list(permission.objects.using(alias).filter(content_type__app_label="wfapp", codename__in=NEW))
    group_links = apps.get_model("auth", "Group").permissions.through
    user_links = apps.get_model(settings.AUTH_USER_MODEL).user_permissions.through
    for links, owner in ((group_links, "group_id"), (user_links, "user_id")):
        owners = set(links.objects.using(alias).filter(permission_id=answer.pk).values_list(owner, flat=True))
        held = set(
            links.objects.using(alias)
            .filter(permission__in=new, **{f"{owner}__in": owners})
            .values_list(owner, "permission_id")
        )
        links.objects.using(alias).bulk_create(
            [
                links(**{owner: who, "permission_id": p.pk})
                for who in sorted(owners)
                for p in new
                if (who, p.pk) not in held
            ]
        )


class Migration(migrations.Migration):

    dependencies = [
        ("wfapp", "0005_interrupt_run_status_index"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="session",
            options={
                "ordering": ["-created_at"],
                "permissions": [
                    ("start_run", "Can start runs"),
                    ("cancel_run", "Can cancel runs"),
                    ("retry_run", "Can retry failed runs"),
                ],
            },
        ),
        migrations.AlterField(
            model_name="answerattempt",
            name="outcome",
            field=models.CharField(
                choices=[
                    ("accepted", "Accepted"),
                    ("already_answered", "Already Answered"),
                    ("invalid", "Invalid"),
                    ("refused", "Refused"),
                    ("forbidden", "Forbidden"),
                    ("too_large", "Too Large"),
                    ("busy", "Busy"),
                ],
                max_length=20,
            ),
        ),
        migrations.RunPython(grant_to_answerers, migrations.RunPython.noop),
    ]
