"""Test helpers: the store contract suite and small builders.

Every ``EventStore`` backend must pass ``EventStoreContract``. Subclass it in a test
module (the class name must start with ``Test``) and provide a ``store`` fixture that
returns a fresh, empty store::

    class TestMyStore(EventStoreContract):
        @pytest.fixture
        def store(self):
            return MyStore()
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Sequence
from typing import Any

import pytest

from .errors import ConcurrencyError, InterruptAlreadyAnswered, UnknownSessionError
from .events import Answer, ErrorInfo, Event, Interrupt
from .store import EventStore

__all__ = ["EventStoreContract", "stamp"]


def stamp(session_id: str, first_seq: int, drafts: Sequence[dict[str, Any]]) -> list[Event]:
    """Build stored events from field dicts, numbering them from ``first_seq``."""
    now = time.time()
    return [
        Event.model_validate(
            {"session_id": session_id, "invocation_id": "inv", "author": "wf", "timestamp": now}
            | draft
            | {"seq": first_seq + offset}
        )
        for offset, draft in enumerate(drafts)
    ]


def _new_id() -> str:
    return uuid.uuid4().hex


class EventStoreContract:
    """The behaviour every event store must have."""

    @pytest.fixture
    def store(self) -> EventStore:  # pragma: no cover - always overridden
        raise NotImplementedError("provide a `store` fixture returning an empty store")

    async def _session(self, store: EventStore, node_input: Any = None) -> str:
        session_id = _new_id()
        await store.create_session(session_id, "wf", node_input)
        return session_id

    async def test_events_come_back_exactly_as_appended(self, store: EventStore) -> None:
        session_id = await self._session(store)
        output = {
            "big": 2**70,
            "tenth": 0.1,
            "text": "é🙂\u2028\"'\\",
            "none": None,
            "list": [1, "a", None, {}],
        }
        drafts = [
            {
                "kind": "completed",
                "node_path": "wf@1/a@1",
                "output": output,
                "timestamp": time.time() + 1 / 3,
            },
            {"kind": "state", "node_path": "wf@1/a@1", "state": {"k": [True, False]}, "timestamp": 1.0},
        ]
        events = stamp(session_id, 1, drafts)
        await store.append(session_id, events, expected_seq=0)
        assert await store.list_events(session_id) == events

    async def test_new_session_is_empty_and_running(self, store: EventStore) -> None:
        session_id = await self._session(store, {"amount": 5})
        info = await store.get_session(session_id)
        assert (info.workflow, info.status, info.last_seq, info.input) == ("wf", "running", 0, {"amount": 5})
        assert await store.list_events(session_id) == []

    async def test_session_keeps_the_version_it_started_on(self, store: EventStore) -> None:
        versioned, plain = _new_id(), _new_id()
        await store.create_session(versioned, "wf", None, version="3")
        await store.create_session(plain, "wf", None)
        assert (await store.get_session(versioned)).version == "3"
        assert (await store.get_session(plain)).version is None

    async def test_seq_is_contiguous_from_one(self, store: EventStore) -> None:
        session_id = await self._session(store)
        last = await store.append(
            session_id, stamp(session_id, 1, [{"kind": "started", "node_path": "wf@1/a@1"}]), expected_seq=0
        )
        assert last == 1
        drafts = [{"kind": "output", "node_path": "wf@1/a@1", "output": n} for n in range(3)]
        last = await store.append(session_id, stamp(session_id, 2, drafts), expected_seq=1)
        assert last == 4
        events = await store.list_events(session_id)
        assert [e.seq for e in events] == [1, 2, 3, 4]
        assert [e.output for e in events[1:]] == [0, 1, 2]
        assert (await store.get_session(session_id)).last_seq == 4

    async def test_stale_expected_seq_raises_and_writes_nothing(self, store: EventStore) -> None:
        session_id = await self._session(store)
        await store.append(session_id, stamp(session_id, 1, [{"kind": "started"}]), expected_seq=0)
        with pytest.raises(ConcurrencyError):
            await store.append(
                session_id, stamp(session_id, 1, [{"kind": "started"}, {"kind": "completed"}]), expected_seq=0
            )
        assert [e.seq for e in await store.list_events(session_id)] == [1]

    async def test_two_concurrent_appenders_exactly_one_wins(self, store: EventStore) -> None:
        session_id = await self._session(store)

        async def writer(tag: str) -> str:
            try:
                await store.append(
                    session_id, stamp(session_id, 1, [{"kind": "state", "state": {"w": tag}}]), expected_seq=0
                )
            except ConcurrencyError:
                return "lost"
            return "won"

        outcomes = await asyncio.gather(writer("a"), writer("b"))
        assert sorted(outcomes) == ["lost", "won"]
        events = await store.list_events(session_id)
        assert len(events) == 1

    async def test_list_after_seq(self, store: EventStore) -> None:
        session_id = await self._session(store)
        drafts = [{"kind": "output", "output": n, "node_path": f"wf@1/n@{n}"} for n in range(5)]
        await store.append(session_id, stamp(session_id, 1, drafts), expected_seq=0)
        assert [e.seq for e in await store.list_events(session_id, after_seq=3)] == [4, 5]
        assert await store.list_events(session_id, after_seq=5) == []

    async def test_status_updates(self, store: EventStore) -> None:
        session_id = await self._session(store)
        for status in ("waiting", "running", "completed"):
            await store.set_status(session_id, status)
            assert (await store.get_session(session_id)).status == status

    async def test_unknown_session(self, store: EventStore) -> None:
        missing = _new_id()
        with pytest.raises(UnknownSessionError):
            await store.get_session(missing)
        with pytest.raises(UnknownSessionError):
            await store.list_events(missing)
        with pytest.raises(UnknownSessionError):
            await store.append(missing, stamp(missing, 1, [{"kind": "started"}]), expected_seq=0)
        with pytest.raises(UnknownSessionError):
            await store.set_status(missing, "failed")

    async def test_nested_json_round_trips(self, store: EventStore) -> None:
        value = {"a": [1, 2.5, {"b": None, "c": [True, False]}], "é": "ünïcode", "n": {"deep": {"er": [[]]}}}
        session_id = await self._session(store, value)
        drafts: list[dict[str, Any]] = [
            {"kind": "output", "node_path": "wf@1/a@1", "output": value, "output_for": ["wf@1/a@1", "wf@1"]},
            {"kind": "state", "node_path": "wf@1/a@1", "state": {"k": value}},
            {"kind": "route", "node_path": "wf@1/a@1", "route": ["x", 2, True]},
            {"kind": "error", "node_path": "wf@1/a@1", "error": ErrorInfo(type="ValueError", message="bad")},
        ]
        await store.append(session_id, stamp(session_id, 1, drafts), expected_seq=0)
        events = await store.list_events(session_id)
        assert events[0].output == value and events[0].output_for == ["wf@1/a@1", "wf@1"]
        assert events[1].state == {"k": value}
        assert events[2].route == ["x", 2, True]
        assert events[3].error == ErrorInfo(type="ValueError", message="bad")
        assert (await store.get_session(session_id)).input == value

    async def test_second_answer_to_one_interrupt_is_refused(self, store: EventStore) -> None:
        session_id = await self._session(store)
        ask = Interrupt(
            id="approve-1", node_path="wf@1/ask@1", message="ok?", response_schema={"type": "boolean"}
        )
        await store.append(
            session_id,
            stamp(session_id, 1, [{"kind": "interrupt", "node_path": ask.node_path, "interrupt": ask}]),
            expected_seq=0,
        )

        def answer(seq: int, actor: str) -> list[Event]:
            return stamp(
                session_id,
                seq,
                [
                    {
                        "kind": "answer",
                        "node_path": ask.node_path,
                        "author": actor,
                        "answer": Answer(interrupt_id="approve-1", value=True, actor=actor),
                    }
                ],
            )

        await store.append(session_id, answer(2, "alice"), expected_seq=1)
        with pytest.raises(InterruptAlreadyAnswered) as refused:
            await store.append(session_id, answer(3, "bob"), expected_seq=2)
        assert refused.value.answered_by == "alice"
        events = await store.list_events(session_id)
        assert [e.kind for e in events] == ["interrupt", "answer"]
        assert events[1].answer is not None and events[1].answer.actor == "alice"

    async def test_interrupt_id_may_be_asked_again_after_its_answer(self, store: EventStore) -> None:
        session_id = await self._session(store)
        ask = Interrupt(id="retry", node_path="wf@1/ask@1")
        drafts = [
            {"kind": "interrupt", "node_path": ask.node_path, "interrupt": ask},
            {
                "kind": "answer",
                "node_path": ask.node_path,
                "answer": Answer(interrupt_id="retry", value=False),
            },
            {"kind": "interrupt", "node_path": ask.node_path, "interrupt": ask},
        ]
        await store.append(session_id, stamp(session_id, 1, drafts), expected_seq=0)
        again = stamp(
            session_id,
            4,
            [
                {
                    "kind": "answer",
                    "node_path": ask.node_path,
                    "answer": Answer(interrupt_id="retry", value=True),
                }
            ],
        )
        assert await store.append(session_id, again, expected_seq=3) == 4

    async def test_an_answer_to_an_earlier_asking_never_answers_a_later_one(self, store: EventStore) -> None:
        session_id = await self._session(store)
        ask = Interrupt(id="payment", node_path="wf@1/ask@1")

        def asked() -> dict[str, Any]:
            return {"kind": "interrupt", "node_path": ask.node_path, "interrupt": ask}

        def answer(request_seq: int) -> dict[str, Any]:
            given = Answer(interrupt_id="payment", value=True, request_seq=request_seq)
            return {"kind": "answer", "node_path": ask.node_path, "answer": given}

        # Asked at 1 and answered; asked again at 3, and at 4 for another payment before an
        # answer (3 superseded: stated again unchanged, it would have stayed the same asking).
        other = {
            "kind": "interrupt",
            "node_path": ask.node_path,
            "interrupt": ask.model_copy(update={"payload": 2}),
        }
        await store.append(
            session_id, stamp(session_id, 1, [asked(), answer(1), asked(), other]), expected_seq=0
        )
        for stale in (1, 3):
            with pytest.raises(ValueError):
                await store.append(session_id, stamp(session_id, 5, [answer(stale)]), expected_seq=4)
        assert [e.kind for e in await store.list_events(session_id)] == [
            "interrupt",
            "answer",
            "interrupt",
            "interrupt",
        ]
        assert await store.append(session_id, stamp(session_id, 5, [answer(4)]), expected_seq=4) == 5

    async def test_a_failed_or_finished_execution_withdraws_its_own_questions(
        self, store: EventStore
    ) -> None:
        session_id = await self._session(store)
        mine = Interrupt(id="mine", node_path="wf@1/ask@1")
        child = Interrupt(id="child", node_path="wf@1/ask@1/inner@1")
        other = Interrupt(id="other", node_path="wf@1/other@1")
        drafts = [
            {"kind": "interrupt", "node_path": i.node_path, "interrupt": i} for i in (mine, child, other)
        ]
        drafts.append({"kind": "error", "node_path": "wf@1/ask@1", "error": ErrorInfo(type="E", message="m")})
        await store.append(session_id, stamp(session_id, 1, drafts), expected_seq=0)

        def answer(seq: int, interrupt_id: str) -> list[Event]:
            return stamp(
                session_id, seq, [{"kind": "answer", "answer": Answer(interrupt_id=interrupt_id, value=1)}]
            )

        with pytest.raises(ValueError):  # withdrawn with the failed attempt that asked it
            await store.append(session_id, answer(5, "mine"), expected_seq=4)
        assert await store.append(session_id, answer(5, "child"), expected_seq=4) == 5
        done = stamp(session_id, 6, [{"kind": "completed", "node_path": "wf@1/other@1"}])
        await store.append(session_id, done, expected_seq=5)
        with pytest.raises(ValueError):  # its node finished without it
            await store.append(session_id, answer(7, "other"), expected_seq=6)
