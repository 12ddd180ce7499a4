"""The Django store passes the engine's store contract suite, with real commits."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from engine import Event
from engine.events import Answer, Interrupt
from engine.testing import EventStoreContract, stamp
from wfapp.models import Interrupt as InboxRow
from wfapp.models import InterruptStatus
from wfapp.store.events import DjangoEventStore


class TestDjangoEventStore(EventStoreContract):
    @pytest.fixture
    def store(self, transactional_db: None) -> DjangoEventStore:
        return DjangoEventStore()


class TestDjangoEventStoreInItsOwnThread(EventStoreContract):
    @pytest.fixture
    def store(self, transactional_db: None) -> DjangoEventStore:
        return DjangoEventStore(own_thread=True)


def _answer(session_id: str, seq: int, interrupt_id: str) -> list[Event]:
    return stamp(session_id, seq, [{"kind": "answer", "answer": Answer(interrupt_id=interrupt_id, value=1)}])


@pytest.mark.parametrize("own_thread", [False, True])
async def test_a_store_that_knew_the_run_clear_still_withdraws_questions_asked_through_another(
    transactional_db: None, own_thread: bool
) -> None:
    first, second = DjangoEventStore(own_thread=own_thread), DjangoEventStore(own_thread=own_thread)
    await first.create_session("s", "wf", None)
    node_a = [{"kind": "started", "node_path": "wf@1/a@1"}, {"kind": "completed", "node_path": "wf@1/a@1"}]
    await first.append("s", stamp("s", 1, node_a), expected_seq=0)  # first now knows: nothing pending
    await second.append("s", _ask("s", 3, "q", "wf@1/b@1"), expected_seq=2)
    await first.append("s", _done("s", 4, "wf@1/b@1"), expected_seq=3)
    assert await sync_to_async(_status)("q") == InterruptStatus.WITHDRAWN
    with pytest.raises(ValueError):
        await first.append("s", _answer("s", 5, "q"), expected_seq=4)


async def test_a_question_asked_and_finished_through_one_store_is_withdrawn(transactional_db: None) -> None:
    store = DjangoEventStore(own_thread=True)
    await store.create_session("s", "wf", None)
    await store.append("s", _ask("s", 1, "q", "wf@1/b@1"), expected_seq=0)
    await store.append("s", _done("s", 2, "wf@1/b@1"), expected_seq=1)
    assert await sync_to_async(_status)("q") == InterruptStatus.WITHDRAWN


def _ask(session_id: str, seq: int, interrupt_id: str, node_path: str) -> list[Event]:
    ask = Interrupt(id=interrupt_id, node_path=node_path)
    return stamp(session_id, seq, [{"kind": "interrupt", "node_path": node_path, "interrupt": ask}])


def _done(session_id: str, seq: int, node_path: str) -> list[Event]:
    return stamp(session_id, seq, [{"kind": "completed", "node_path": node_path}])


def _status(interrupt_id: str) -> str:
    return InboxRow.objects.get(interrupt_id=interrupt_id).status
