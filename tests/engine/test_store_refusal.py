"""When the store refuses an append, the turn stops at once: no retries, no error events."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engine import START, Event, InMemoryEventStore, RetryConfig, Runner, Workflow, node
from engine.errors import ConcurrencyError


class RefusingStore(InMemoryEventStore):
    """Refuses every append after the first ``allowed`` ones, as if another writer moved on."""

    def __init__(self, allowed: int) -> None:
        super().__init__()
        self.allowed = allowed
        self.appends = 0

    async def append(self, session_id: str, events: Sequence[Event], *, expected_seq: int) -> int:
        self.appends += 1
        if self.appends > self.allowed:
            raise ConcurrencyError(session_id, expected_seq, expected_seq + 1)
        return await super().append(session_id, events, expected_seq=expected_seq)


async def test_a_refused_append_ends_the_turn_without_retrying() -> None:
    attempts: list[int] = []

    @node(retry_config=RetryConfig(max_attempts=5, initial_delay=30, jitter=0))
    async def step(ctx: Any, node_input: Any):
        attempts.append(ctx.attempt_count)
        yield Event(state={"n": 1})
        yield "done"

    store = RefusingStore(allowed=0)
    runner = Runner(Workflow(name="refused", edges=[(START, step)]), store=store)
    with pytest.raises(ConcurrencyError):
        await runner.run(None, session_id="s")
    assert attempts == [1]
    assert await store.list_events("s") == []
