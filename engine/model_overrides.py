"""Which model an agent uses this turn, when the host swaps it without editing the agent.

``Runner(workflow, store, models={"triage": "openai:gpt-5-mini", "*": TestModel()})`` sets this
for the turns it runs (a name for one agent, ``"*"`` for every agent); agents read it in
``engine.agents.models.chosen_model``, after it the ``ENGINE_AGENT_MODELS`` environment variable
(the same mapping as JSON, model strings only). Kept here, free of pydantic-ai, so the runner
needs no agent code.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

MODEL_OVERRIDES: ContextVar[Mapping[str, Any] | None] = ContextVar("engine_model_overrides", default=None)
