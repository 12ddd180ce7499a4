"""The wfapp Django app, and the place the layers are wired: at start-up the higher layers hook
into the lower ones here (the store's signals, the runtime's companions), registers the system
checks, the logout receiver and the API tokens' revocation, applies the engine's limits, and
creates the expense demo's groups after each migrate."""

from __future__ import annotations

from django.apps import AppConfig


class WfappConfig(AppConfig):
    name = "wfapp"
    verbose_name = "Workflows"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.core.signals import setting_changed
        from django.db.models.signals import post_migrate

        from wfapp.api import token_revocation
        from wfapp.demos.expense_approval_people import ensure_groups
        from wfapp.notify import checks as _notify_checks  # noqa: F401  (and the notification settings')
        from wfapp.notify import pump, triggers
        from wfapp.runs import checks as _checks  # noqa: F401  (registers the checks)
        from wfapp.runs import dispatch, runtime
        from wfapp.runs.inputs import apply_limits, limits_changed
        from wfapp.store import hooks
        from wfapp.web.live import logout  # noqa: F401  (closes a session's sockets when it logs out)

        apply_limits()
        # Workers mode defers a run's advance job in the transaction that records its answer.
        hooks.answer_recorded.connect(dispatch.answer_recorded, dispatch_uid="wfapp.runs.dispatch")
        if pump.run_forever not in runtime.COMPANIONS:  # the embedded runtime sends notifications
            runtime.COMPANIONS.append(pump.run_forever)
        triggers.connect()  # notices for questions assigned, escalated, about to be overdue
        post_migrate.connect(ensure_groups, sender=self)  # the groups the expense demo assigns to
        setting_changed.connect(limits_changed)
        token_revocation.connect()  # a user deactivated or with a new password loses their tokens
