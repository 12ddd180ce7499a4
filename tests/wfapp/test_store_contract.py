"""The Django store passes the engine's store contract suite, with real commits."""

from __future__ import annotations

import pytest

from engine.testing import EventStoreContract
from wfapp.store import DjangoEventStore


class TestDjangoEventStore(EventStoreContract):
    @pytest.fixture
    def store(self, transactional_db: None) -> DjangoEventStore:
        return DjangoEventStore()
