"""The store protocol every event log backend implements."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from .events import Event

STATUSES = ("running", "waiting", "completed", "failed", "cancelled")
FINAL_STATUSES = frozenset({"completed", "cancelled"})


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """What a store knows about a session besides its events."""

    session_id: str
    workflow: str
    status: str
    last_seq: int
    input: Any
    created_at: float
    updated_at: float
    version: str | None = None  # the workflow version the run started on (None: not recorded)


@runtime_checkable
class EventStore(Protocol):
    """An append-only, per-session event log.

    ``append`` is atomic. It raises ``ConcurrencyError`` and writes nothing when the log's
    last seq is not ``expected_seq``, and ``InterruptAlreadyAnswered`` when an answer event
    names an interrupt that is not pending (``AskingClosedError`` when its ``request_seq``
    is not the pending asking's). Events arrive with ``seq`` already stamped,
    contiguous from ``expected_seq + 1``. ``create_session`` records the workflow version
    the run starts on; ``get_session`` gives it back.
    """

    async def create_session(
        self, session_id: str, workflow: str, node_input: Any, *, version: str | None = None
    ) -> None: ...

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int: ...

    async def list_events(self, session_id: str, after_seq: int = 0) -> list[Event]: ...

    async def get_session(self, session_id: str) -> SessionInfo: ...

    async def set_status(self, session_id: str, status: str) -> None: ...
