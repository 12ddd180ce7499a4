"""The groups and users the ``expense_approval`` demo assigns its questions to.

The groups exist wherever the demo is registered: ``ensure_groups`` runs after every
``migrate`` (and every test database flush), since a question assigned to a group that does
not exist fails its node. ``seed_users`` (``manage.py seed_demo``, run by ``make run``) adds
one operator per role so a newcomer can log in as each and watch the assignment work. The groups
hold the permissions (not the users one by one): a user an administrator adds to "managers"
answers the managers' questions. ``login_lines`` tells who they are and where their password is.
"""

from __future__ import annotations

from pathlib import Path
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


def grant_groups() -> None:
    """Give each demo group the operators' permissions (a member answers, starts, cancels, retries)."""
    ensure_groups()
    permissions = Permission.objects.filter(
        codename__in=OPERATOR_PERMISSIONS, content_type__app_label="wfapp"
    )
    for group in Group.objects.filter(name__in=GROUPS):
        group.permissions.add(*permissions)


def seed_users(password: str) -> list[str]:
    """Create the demo users that are missing, with ``password``, each in their groups (which
    hold the permissions); return the names created."""
    grant_groups()
    users = get_user_model()
    created = []
    for username, groups in USERS.items():
        if users.objects.filter(username=username).exists():
            continue
        user = users.objects.create_user(username=username, password=password)
        user.groups.add(*Group.objects.filter(name__in=groups))
        created.append(username)
    return created


def reset_passwords(password: str) -> list[str]:
    """Give the demo users that exist ``password`` (a later start's WFAPP_DEMO_PASSWORD); the names changed."""
    changed = []
    for user in get_user_model().objects.filter(username__in=USERS):
        if not user.check_password(password):
            user.set_password(password)
            user.save(update_fields=["password"])
            changed.append(user.get_username())
    return changed


def password_file() -> Path:
    """Where a generated demo password is kept (readable by its owner only), in the data folder."""
    return Path(settings.DATA_DIR) / "demo-password.txt"


def login_lines() -> list[str]:
    """Who the demo users are and where their password is: ``make run``'s last lines, by the address."""
    users = get_user_model().objects.filter(username__in=USERS).order_by("pk")
    names = [user.get_username() for user in users]
    if not names:
        return []
    roles = ", ".join(f"{name} ({'/'.join(USERS[name])})" for name in names)
    kept = password_file()
    where = f"their password is in {kept}" if kept.exists() else "their password is WFAPP_DEMO_PASSWORD"
    return [
        f"Demo users: {roles}; {where}.",
        "The administrator is admin (WFAPP_ADMIN_PASSWORD, or shown at its first start).",
    ]
