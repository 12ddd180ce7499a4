"""wfapp's workflow engine: the ADK 2.0 Workflow model on a durable event log."""

from __future__ import annotations

from .errors import NodeInterruptedError, NodeTimeoutError
from .events import DEFAULT_ROUTE, Event, Interrupt, RequestInput
from .memory import InMemoryEventStore
from .store import EventStore, SessionInfo

__all__ = [
    "DEFAULT_ROUTE",
    "Event",
    "EventStore",
    "InMemoryEventStore",
    "Interrupt",
    "NodeInterruptedError",
    "NodeTimeoutError",
    "RequestInput",
    "SessionInfo",
]
