"""The wfapp Django app: registers the system checks and the logout receiver, applies the engine's
limits, and creates the expense demo's groups after each migrate."""

from __future__ import annotations

from django.apps import AppConfig


class WfappConfig(AppConfig):
    name = "wfapp"
    verbose_name = "Workflows"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed
        from django.db.models.signals import post_migrate

        from . import checks  # noqa: F401  (registers the checks)
        from .demos.expense_approval_people import ensure_groups
        from .inputs import apply_limits, limits_changed
        from .notify import checks as _notify_checks  # noqa: F401  (and the notification settings')
        from .notify import triggers
        from .web.live import logout  # noqa: F401  (closes a session's sockets when it logs out)

        apply_limits()
        triggers.connect()  # notices for questions assigned, escalated, about to be overdue
        post_migrate.connect(ensure_groups, sender=self)  # the groups the expense demo assigns to
        setting_changed.connect(limits_changed)
