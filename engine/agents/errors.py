"""Errors of agent nodes, sorted like the engine's: definition, model setup, model behaviour."""

from __future__ import annotations

from ..errors import ConfigurationError, WorkflowError


class AgentConfigurationError(ConfigurationError):
    """An agent or tool is defined in a way that can never run (an unknown provider, say)."""


class ModelSetupError(WorkflowError):
    """The model cannot be reached as configured: a missing API key, say. Names what to set."""


class AgentOutputError(WorkflowError):
    """The model kept giving tool arguments or an answer that do not validate; says what was wrong."""


class TemplateKeyError(WorkflowError):
    """An instruction names a ``{key}`` that neither the state nor the input holds."""
