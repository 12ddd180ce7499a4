"""The in-memory store passes the store contract suite."""

from __future__ import annotations

import pytest

from engine import InMemoryEventStore
from engine.testing import EventStoreContract


class TestInMemoryEventStore(EventStoreContract):
    @pytest.fixture
    def store(self) -> InMemoryEventStore:
        return InMemoryEventStore()
