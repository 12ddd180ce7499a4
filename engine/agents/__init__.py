"""Agent nodes: LLM agents and tools as workflow nodes, on pydantic-ai."""

from __future__ import annotations

from .agent import Agent, LlmAgent
from .errors import AgentConfigurationError, AgentOutputError, ModelSetupError, TemplateKeyError
from .tools import BaseTool, FunctionTool, tool
from .transfer import Handoff, Transfer

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
    "Transfer",
    "tool",
]
