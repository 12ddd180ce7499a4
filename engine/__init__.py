"""wfapp's workflow engine: the ADK 2.0 Workflow model on a durable event log."""

from __future__ import annotations

from .agents import Agent, BaseTool, FunctionTool, LlmAgent, tool
from .context import Context
from .errors import NodeInterruptedError, NodeTimeoutError
from .events import DEFAULT_ROUTE, Event, Interrupt, RequestInput
from .graph import Edge
from .memory import InMemoryEventStore
from .nodes import START, BaseNode, FunctionNode, JoinNode, node
from .retry import RetryConfig
from .runner import Runner, RunResult
from .store import EventStore, SessionInfo
from .workflow import Workflow

__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "Agent",
    "BaseNode",
    "BaseTool",
    "Context",
    "Edge",
    "Event",
    "EventStore",
    "FunctionNode",
    "FunctionTool",
    "InMemoryEventStore",
    "Interrupt",
    "JoinNode",
    "LlmAgent",
    "NodeInterruptedError",
    "NodeTimeoutError",
    "RequestInput",
    "RetryConfig",
    "RunResult",
    "Runner",
    "SessionInfo",
    "Workflow",
    "node",
    "tool",
]
