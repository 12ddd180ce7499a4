"""Create the admin user on first run: password from WFAPP_ADMIN_PASSWORD, else generated and shown once."""

from __future__ import annotations

import os
import secrets
from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand


class Command(BaseCommand):
    help = "Create the admin superuser if missing (WFAPP_ADMIN_USER, WFAPP_ADMIN_PASSWORD)."

    def handle(self, *args: Any, **options: Any) -> None:
        username = os.environ.get("WFAPP_ADMIN_USER", "admin")
        password = os.environ.get("WFAPP_ADMIN_PASSWORD", "")
        users = get_user_model()
        user = users.objects.filter(username=username).first()
        if user is not None:
            if password and not user.check_password(password):
                user.set_password(password)
                user.save(update_fields=["password"])
                self.stdout.write(f"Admin user '{username}': password set from WFAPP_ADMIN_PASSWORD.")
            return
        generated = not password
        password = password or secrets.token_urlsafe(12)
        users.objects.create_superuser(username=username, email="", password=password)
        if generated:
            self.stdout.write(
                f"Created admin user '{username}' with password: {password}\n"
                "(shown only this once; set WFAPP_ADMIN_PASSWORD to choose it)"
            )
        else:
            self.stdout.write(f"Created admin user '{username}' with the password from WFAPP_ADMIN_PASSWORD.")
