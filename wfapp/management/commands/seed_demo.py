"""Create the demo users of ``expense_approval``: password from WFAPP_DEMO_PASSWORD (which also
resets the password of demo users made on an earlier start), else generated and kept in the
data folder's ``demo-password.txt``, readable by its owner only."""

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
        chosen = os.environ.get("WFAPP_DEMO_PASSWORD", "")
        if chosen:
            reset = people.reset_passwords(chosen)
            if reset:
                self.stdout.write(f"Demo users {', '.join(reset)}: password set from WFAPP_DEMO_PASSWORD.")
            people.password_file().unlink(missing_ok=True)  # no longer their password
        kept = people.password_file()
        password = chosen or (kept.read_text().strip() if kept.exists() else "") or secrets.token_urlsafe(9)
        created = people.seed_users(password)
        if created and not chosen and not kept.exists():
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.touch(mode=0o600)
            kept.write_text(password + "\n")
        if created:
            roles = ", ".join(f"{name} ({'/'.join(people.USERS[name])})" for name in created)
            where = "WFAPP_DEMO_PASSWORD" if chosen else f"the password in {kept}"
            self.stdout.write(f"Created demo users {roles} with {where}.")
