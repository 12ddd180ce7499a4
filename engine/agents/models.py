"""Which pydantic-ai model an agent uses, checked at construction and built at first use.

A model string is checked when the agent is defined (the provider's package must be
installed, else the error names the extra to install); the model itself is built the first
time the agent runs, so a missing API key fails that run with pydantic-ai's message naming
the variable, and defining a workflow never needs a key.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from pydantic_ai.exceptions import UserError
from pydantic_ai.models import Model, infer_model, parse_model_id
from pydantic_ai.providers import infer_provider_class

from ..model_overrides import MODEL_OVERRIDES
from .errors import AgentConfigurationError, ModelSetupError

# The seeds write Gemini models by bare name ("gemini-flash-latest"), as ADK does.
_BARE_PREFIXES = {"gemini": "google"}


def model_string(model: str) -> str:
    """The ``provider:name`` form of a model string (bare Gemini names go to Google's provider)."""
    if ":" in model or model == "test":
        return model
    family = model.split("-", 1)[0]
    provider = _BARE_PREFIXES.get(family)
    return f"{provider}:{model}" if provider else model


def check_model(model: Any, agent: str) -> Model | str:
    """Return ``model`` as a pydantic-ai ``Model`` or a checked ``provider:name`` string."""
    if isinstance(model, Model):
        return model
    if not isinstance(model, str) or not model:
        raise AgentConfigurationError(
            f"Agent '{agent}': model must be a model string such as 'openai:gpt-5-mini' or a "
            f"pydantic-ai Model instance, not {model!r}"
        )
    name = model_string(model)
    if name == "test":
        return name
    provider, _ = parse_model_id(name)
    if provider is None:
        raise AgentConfigurationError(
            f"Agent '{agent}': model '{model}' names no provider; write it as 'provider:model' "
            "(for example 'openai:gpt-5-mini', 'anthropic:claude-sonnet-4-5', 'google:gemini-flash-latest')"
        )
    try:
        infer_provider_class(provider)
    except ImportError as error:
        raise AgentConfigurationError(f"Agent '{agent}': model '{model}' cannot be used: {error}") from error
    except ValueError as error:
        raise AgentConfigurationError(
            f"Agent '{agent}': model '{model}' names the unknown provider '{provider}'"
        ) from error
    return name


def build_model(model: Model | str, agent: str) -> Model:
    """Build the model; a missing API key or setting fails naming what to set."""
    try:
        return infer_model(model)
    except UserError as error:
        raise ModelSetupError(f"Agent '{agent}': model '{model}' cannot be used: {error}") from error


def model_label(model: Model | str) -> str:
    """How the dashboard names a model."""
    if isinstance(model, str):
        return model
    return f"{model.system}:{model.model_name}"


ENV_OVERRIDES = "ENGINE_AGENT_MODELS"
_parsed: dict[str, dict[str, str]] = {}


def _env_overrides() -> Mapping[str, Any]:
    """``ENGINE_AGENT_MODELS`` as a mapping (parsed once per value): ``{"triage": "openai:...", "*": "test"}``."""
    text = os.environ.get(ENV_OVERRIDES)
    if not text:
        return {}
    parsed = _parsed.get(text)
    if parsed is None:
        try:
            loaded = json.loads(text)
        except ValueError as error:
            raise AgentConfigurationError(
                f"{ENV_OVERRIDES} must be a JSON object of model strings: {error}"
            ) from None
        if not isinstance(loaded, dict) or not all(isinstance(v, str) and v for v in loaded.values()):
            raise AgentConfigurationError(
                f'{ENV_OVERRIDES} must be a JSON object such as {{"triage": "openai:gpt-5-mini", "*": "test"}}'
            )
        parsed = _parsed[text] = loaded
    return parsed


def chosen_model(agent: str, own: Model | str | None) -> Model | str | None:
    """The model ``agent`` uses this turn: the runner's override (by name, then ``"*"``), then the
    environment's, then its own (engine.model_overrides)."""
    for overrides in (MODEL_OVERRIDES.get(), _env_overrides()):
        if overrides:
            chosen = overrides.get(agent, overrides.get("*"))
            if chosen is not None:
                return check_model(chosen, agent)
    return own
