"""The embedded profile's data directory: its own user's only (0700), its SQLite files 0600.

Created here before SQLite opens the database, since SQLite makes a new database file with the
process's umask (often 0644: world-readable) and its ``-wal`` and ``-shm`` files with the
database file's mode. An existing directory or file this user owns is tightened the same way.
"""

from __future__ import annotations

import os
from pathlib import Path


def _tighten(path: Path, mode: int) -> None:
    if path.stat().st_uid == os.getuid() and path.stat().st_mode & 0o777 != mode:
        path.chmod(mode)


def private_sqlite(database: Path) -> None:
    """Make ``database``'s directory 0700 and the file (created empty if missing) 0600."""
    database.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    _tighten(database.parent, 0o700)
    try:
        os.close(os.open(database, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    except FileExistsError:
        pass
    for path in (database, Path(f"{database}-wal"), Path(f"{database}-shm")):
        if path.exists():
            _tighten(path, 0o600)
