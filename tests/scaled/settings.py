"""Settings of the scaled-mode tests' processes: the embedded profile's, with only the test
workflows registered (``WFAPP_EXTRA_WORKFLOWS``). The demos are left out: one imports
pydantic-ai, seconds of start-up for every worker, server and client process the tests start."""

from __future__ import annotations

from wfapp.settings.embedded import *  # noqa: F403
from wfapp.settings.environment import env_list

WFAPP_WORKFLOWS = env_list("WFAPP_EXTRA_WORKFLOWS")
