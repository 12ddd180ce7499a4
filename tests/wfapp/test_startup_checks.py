"""Start-up problems get the command that fixes them, never a traceback or a 500 on every page.

Each command runs in a subprocess, as an operator would run it, on a fresh SQLite data folder.
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

from tests.wfapp.helpers import embedded_only

ROOT = Path(__file__).resolve().parents[2]
EXPENSE = json.dumps({"employee": "Ann", "amount": 20, "category": "travel", "description": "Taxi"})

pytestmark = embedded_only(
    "operator commands on a fresh SQLite data folder; workers mode refuses SQLite at start-up "
    "(tests/scaled/test_faults.py)"
)


def _manage(data_dir: Path, *args: str, production: bool = False) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    env.update(DJANGO_SETTINGS_MODULE="wfapp.settings.embedded", WFAPP_DATA_DIR=str(data_dir))
    if production:
        env.update(
            DJANGO_SETTINGS_MODULE="wfapp.settings.production",
            SECRET_KEY="test-" + secrets.token_urlsafe(50),
            ALLOWED_HOSTS="wf.example.com",
        )
    # A server that starts anyway never returns: the timeout makes that a failure, not a hang.
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_cli_on_an_unmigrated_database_says_to_migrate(tmp_path: Path) -> None:
    for args in (("show", "some-run"), ("start", "expense_approval", "--input", EXPENSE)):
        done = _manage(tmp_path, "wf", *args)
        assert done.returncode != 0, args
        assert "run `python manage.py migrate` first" in done.stderr, done.stderr
        assert "Traceback" not in done.stderr
    assert _manage(tmp_path, "migrate", "-v0").returncode == 0
    done = _manage(tmp_path, "wf", "show", "some-run")
    assert done.returncode != 0 and "migrate" not in done.stderr  # now the run is what is unknown


def test_serve_refuses_an_unmigrated_database(tmp_path: Path) -> None:
    done = _manage(tmp_path, "serve", "--port", "0")
    assert done.returncode != 0
    assert "run `python manage.py migrate` first" in done.stderr and "Traceback" not in done.stderr


def test_production_serve_and_check_deploy_say_to_collectstatic_first(tmp_path: Path) -> None:
    assert _manage(tmp_path, "migrate", "-v0", production=True).returncode == 0
    check = _manage(tmp_path, "check", "--deploy", production=True)
    assert check.returncode != 0
    assert "wfapp.static_not_collected" in check.stderr
    assert "python manage.py collectstatic --noinput" in check.stderr
    serve = _manage(tmp_path, "serve", "--port", "0", production=True)
    assert serve.returncode != 0 and "Traceback" not in serve.stderr
    assert "have not been collected" in serve.stderr
    assert "run `python manage.py collectstatic --noinput` (with the same settings) first" in serve.stderr

    assert _manage(tmp_path, "collectstatic", "--noinput", "-v0", production=True).returncode == 0
    check = _manage(tmp_path, "check", "--deploy", production=True)
    assert check.returncode == 0, check.stderr
