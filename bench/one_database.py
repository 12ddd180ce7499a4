"""One database's measurement in a subprocess of its own, its result handed back as JSON.

``bench.dashboard`` and ``bench.live_load`` each measure every database in a child process on a
fresh data directory: the parent runs the child with ``in_subprocess`` and the child writes
what it measured, or what went wrong, with ``write_result``.
"""

from __future__ import annotations

import json
import subprocess
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any


def write_result(out: Path, database: str, measure: Callable[[], dict[str, Any]]) -> int:
    """Write ``measure()`` to ``out``, or the error it raised; the exit status to return."""
    try:
        result = measure()
    except Exception as exc:
        result = {
            "database": database,
            "error": f"{type(exc).__name__}: {exc}",
            "traceback": traceback.format_exc(),
        }
    out.write_text(json.dumps(result, indent=1) + "\n")
    return 1 if "error" in result else 0


def in_subprocess(cmd: list[str], cwd: Path, env: dict[str, str], out: Path, timeout: int) -> dict[str, Any]:
    """Run ``cmd``, a child that writes its result to ``out``; the result, or why there is none."""
    try:
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    result: dict[str, Any] = json.loads(out.read_text()) if out.exists() else {}
    return result or {"error": f"exited {done.returncode} without results", "traceback": done.stderr[-4000:]}
