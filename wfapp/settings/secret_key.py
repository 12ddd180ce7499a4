"""The embedded profile's SECRET_KEY: generated once, kept in a local file that is never committed."""

from __future__ import annotations

import os
import secrets
from pathlib import Path


def load_or_create(path: Path) -> str:
    """Return the key stored at ``path``, creating the file (mode 0600) on first use."""
    try:
        key = path.read_text().strip()
        if key:
            return key
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        # Another process created it between our read and our write: use theirs.
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(key + "\n")
    return key
