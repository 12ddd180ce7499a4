"""Agent nodes: LLM agents and tools as workflow nodes, on pydantic-ai."""

from __future__ import annotations

from .agent import Agent, Handoff, LlmAgent
from .errors import AgentConfigurationError, AgentOutputError, ModelSetupError, TemplateKeyError
from .tools import BaseTool, FunctionTool, tool

__all__ = [
    "Agent",
    "AgentConfigurationError",
    "AgentOutputError",
    "BaseTool",
    "FunctionTool",
    "Handoff",
    "LlmAgent",
    "ModelSetupError",
    "TemplateKeyError",
    "tool",
]
