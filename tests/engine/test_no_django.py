"""The engine stays free of Django, Channels and Daphne."""

from __future__ import annotations

import subprocess
import sys


def test_importing_the_engine_loads_no_django() -> None:
    code = (
        "import sys, engine, engine.runner, engine.workflow, engine.memory\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in {'django', 'channels', 'daphne', 'wfapp'})\n"
        "print(','.join(bad))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == ""
