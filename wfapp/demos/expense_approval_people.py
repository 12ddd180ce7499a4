"""The groups and users the ``expense_approval`` demo assigns its questions to.

The groups exist wherever the demo is registered: ``ensure_groups`` runs after every
``migrate`` (and every test database flush), since a question assigned to a group that does
not exist fails its node. ``seed_users`` (``manage.py seed_demo``, run by ``make run``) adds
one operator per role so a newcomer can log in as each and watch the assignment work.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission

GROUPS = ("managers", "finance", "directors")
# username -> the groups they are in: one manager, two finance people (a quorum), one director.
USERS = {"mia": ("managers",), "fred": ("finance",), "fiona": ("finance",), "dora": ("directors",)}
OPERATOR_PERMISSIONS = ("answer_interrupt", "start_run", "cancel_run", "retry_run")
WORKFLOW_PATH = "wfapp.demos.expense_approval:expense_approval"


def registered() -> bool:
    return WORKFLOW_PATH in settings.WFAPP_WORKFLOWS


def ensure_groups(**_: Any) -> None:
    """Create the demo's groups when the demo is registered (a ``post_migrate`` receiver)."""
    if registered():
        for name in GROUPS:
            Group.objects.get_or_create(name=name)


def seed_users(password: str) -> list[str]:
    """Create the demo users that are missing, with ``password``; return the names created."""
    ensure_groups()
    permissions = Permission.objects.filter(
        codename__in=OPERATOR_PERMISSIONS, content_type__app_label="wfapp"
    )
    users = get_user_model()
    created = []
    for username, groups in USERS.items():
        if users.objects.filter(username=username).exists():
            continue
        user = users.objects.create_user(username=username, password=password)
        user.groups.add(*Group.objects.filter(name__in=groups))
        user.user_permissions.add(*permissions)
        created.append(username)
    return created
