"""Create the demo users of ``expense_approval`` (WFAPP_DEMO_PASSWORD, else generated and shown once)."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.core.management.base import BaseCommand

from wfapp.demos import expense_approval_people as people


class Command(BaseCommand):
    help = "Create the expense_approval demo's groups and users if missing (WFAPP_DEMO_PASSWORD)."

    def handle(self, *args: Any, **options: Any) -> None:
        if not people.registered():
            return
        password = os.environ.get("WFAPP_DEMO_PASSWORD", "")
        generated = not password
        password = password or secrets.token_urlsafe(9)
        created = people.seed_users(password)
        if not created:
            return
        roles = ", ".join(f"{name} ({'/'.join(people.USERS[name])})" for name in created)
        shown = f"password: {password}\n(shown only this once; set WFAPP_DEMO_PASSWORD to choose it)"
        self.stdout.write(
            f"Created demo users {roles} with " + (shown if generated else "WFAPP_DEMO_PASSWORD.")
        )
