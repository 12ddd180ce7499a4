"""Counting a Python program's machine instructions with ``valgrind --tool=callgrind``.

Shared by ``bench.engine_callgrind`` and ``bench.agents_callgrind``: the count does not move
with the machine's load, so ratios read from it hold on a shared machine.
"""

from __future__ import annotations

import os
import re
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def instructions(python: str, program: str, *args: str) -> int:
    """The instructions ``python -c program args...`` executes, run from the project's root."""
    with tempfile.TemporaryDirectory() as out:
        done = subprocess.run(
            ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}/cg", python, "-c", program, *args],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": "0"},
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise SystemExit(f"callgrind printed no total for {' '.join(args)}:\n{done.stderr[-2000:]}")
    return int(found.group(1))
