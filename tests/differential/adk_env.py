"""google-adk's own virtualenv for the harness: where it is, and creating it.

``python -m tests.differential.adk_env`` creates ``tests/differential/.adk-venv`` on the
running interpreter's Python and installs the pinned google-adk from PyPI (never into the
project's environment). ``ADK_PYTHON`` names another interpreter that has it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".adk-venv"
REQUIREMENT = "google-adk==2.13.0"  # the version issue 25 names as the reference


def python() -> Path | None:
    """The interpreter that has google-adk, or None when there is none yet."""
    named = os.environ.get("ADK_PYTHON")
    candidate = Path(named) if named else VENV / "bin" / "python"
    return candidate if candidate.exists() else None


def create() -> Path:
    """Create the virtualenv (once) and install google-adk into it; return its python."""
    target = VENV / "bin" / "python"
    if not target.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    check = [str(target), "-c", "import google.adk, sys; sys.exit(google.adk.__version__ != '2.13.0')"]
    if subprocess.run(check, capture_output=True).returncode:
        subprocess.run([str(target), "-m", "pip", "install", "--quiet", REQUIREMENT], check=True)
    return target


if __name__ == "__main__":
    print(create())
