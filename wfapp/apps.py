"""The wfapp Django app: registers the workflow system checks."""

from __future__ import annotations

from django.apps import AppConfig


class WfappConfig(AppConfig):
    name = "wfapp"
    verbose_name = "Workflows"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from . import checks  # noqa: F401  (registers the checks)
