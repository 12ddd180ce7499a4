"""wfapp's workflow engine: the ADK 2.0 Workflow model on a durable event log."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .answers import Asking, asking_digest
from .context import Context
from .errors import DynamicNodeFailError, NodeInterruptedError, NodeTimeoutError
from .events import DEFAULT_ROUTE, Event, Interrupt, RequestInput
from .folded import FoldedLogs
from .gate import NodeGate
from .graph import Edge
from .human import TIMEOUT_FAIL, HumanPolicy
from .memory import InMemoryEventStore
from .nodes import START, BaseNode, FunctionNode, JoinNode, node
from .replay_check import ReplayReport, replay_check
from .retry import RetryConfig
from .runner import Runner, RunResult
from .store import EventStore, SessionInfo
from .workflow import Workflow

if TYPE_CHECKING:
    from .agents import Agent, BaseTool, FunctionTool, LlmAgent, tool

# Agent nodes bring pydantic-ai, which takes about a second to import: load it on first use.
_AGENT_NAMES = frozenset({"Agent", "BaseTool", "FunctionTool", "LlmAgent", "tool"})


def __getattr__(name: str) -> Any:
    if name in _AGENT_NAMES:
        from . import agents

        return getattr(agents, name)
    raise AttributeError(f"module 'engine' has no attribute {name!r}")


__all__ = [
    "DEFAULT_ROUTE",
    "START",
    "TIMEOUT_FAIL",
    "Agent",
    "Asking",
    "BaseNode",
    "BaseTool",
    "Context",
    "DynamicNodeFailError",
    "Edge",
    "Event",
    "EventStore",
    "FoldedLogs",
    "FunctionNode",
    "FunctionTool",
    "HumanPolicy",
    "InMemoryEventStore",
    "Interrupt",
    "JoinNode",
    "LlmAgent",
    "NodeGate",
    "NodeInterruptedError",
    "NodeTimeoutError",
    "ReplayReport",
    "RequestInput",
    "RetryConfig",
    "RunResult",
    "Runner",
    "SessionInfo",
    "Workflow",
    "asking_digest",
    "node",
    "replay_check",
    "tool",
]
