"""`/healthz` tells a probe "unavailable" and keeps the database's error text for the log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import django
django.setup()
from django.test.utils import setup_test_environment
setup_test_environment()
from django.test import Client
response = Client().get("/healthz")
print(response.status_code, response.content.decode())
"""


def test_an_unreachable_database_is_unavailable_without_its_error_text(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded",
        "WFAPP_DATA_DIR": str(tmp_path),
        "DATABASE_URL": "postgres://internal-user@127.0.0.1:1/internal-db",  # nothing listens on 1
        "WFAPP_DB_POOL_SIZE": "0",
    }
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    status, body = done.stdout.strip().split(" ", 1)
    assert status == "503"
    assert json.loads(body) == {"runtime": "embedded", "database": "unavailable"}
    assert "healthz: database unreachable" in done.stderr and "port 1 failed" in done.stderr
