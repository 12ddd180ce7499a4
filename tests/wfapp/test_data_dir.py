"""The embedded profile's data directory is its user's only: 0700, the SQLite files 0600."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_migrate_makes_a_private_data_directory_and_database(tmp_path: Path) -> None:
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    env |= {"DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded", "WFAPP_DATA_DIR": str(data)}
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=300,
        preexec_fn=lambda: os.umask(0o022),  # the usual umask: new files world-readable
    )
    assert _mode(data) == 0o700
    files = [p for p in data.iterdir() if p.name.startswith("wfapp.sqlite3")]
    assert data / "wfapp.sqlite3" in files
    assert {p.name: _mode(p) for p in files} == {p.name: 0o600 for p in files}
    assert _mode(data / "secret_key") == 0o600
