"""The inbox stream's resume is exact on PostgreSQL when transactions commit out of id order:
two real concurrent appends, the one with the lower entry id committing last."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest
from asgiref.sync import sync_to_async
from django.db import connection, connections, transaction

from engine import Interrupt
from engine.testing import stamp
from tests.api.conftest import Api, request_thread
from tests.api.sse import Reader
from wfapp.models import Event, Session
from wfapp.store.doorbell import ring
from wfapp.store.events import DjangoEventStore

NODE = "expense_approval@1/manager_review@1"


@pytest.fixture
def postgresql(transactional_db: None) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("transactions commit out of id order on PostgreSQL only: set DATABASE_URL")


async def _stream(api: Api, path: str, **headers: str) -> Reader:
    async with request_thread():
        return Reader(await api.get(path, **headers))


def _ask(session_id: str, interrupt_id: str) -> None:
    """Append a question to the run (its ``interrupt`` event and inbox row, one transaction)."""
    last = Session.objects.get(pk=session_id).last_seq
    ask = Interrupt(id=interrupt_id, node_path=NODE, message=f"{interrupt_id}?")
    events = stamp(session_id, last + 1, [{"kind": "interrupt", "node_path": NODE, "interrupt": ask}])
    DjangoEventStore().append_sync(session_id, events, expected_seq=last)


class HeldAppend:
    """An append in a thread of its own whose transaction stays open until ``commit``."""

    def __init__(self, session_id: str, interrupt_id: str) -> None:
        self.inserted = threading.Event()
        self.release = threading.Event()
        self.failed: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, args=(session_id, interrupt_id))

    def _run(self, session_id: str, interrupt_id: str) -> None:
        try:
            with transaction.atomic():
                _ask(session_id, interrupt_id)
                self.inserted.set()
                assert self.release.wait(30), "never released"
        except BaseException as error:  # handed to the test
            self.failed.append(error)
            self.inserted.set()
        finally:
            connections.close_all()

    def commit(self) -> None:
        self.release.set()
        self.thread.join(30)
        assert not self.failed, self.failed


@pytest.fixture
def held() -> Iterator[list[HeldAppend]]:
    appends: list[HeldAppend] = []
    yield appends
    for append in appends:  # a failing test still lets its transactions end
        append.release.set()
        append.thread.join(30)


def _entry_id(session_id: str, interrupt_id: str) -> int:
    return Event.objects.get(session_id=session_id, kind="interrupt", data__interrupt__id=interrupt_id).pk


async def test_a_change_committed_late_below_the_position_is_sent_on_resume_and_live(
    postgresql: None, waiting_run: Callable[..., Any], as_bob: Api, held: list[HeldAppend]
) -> None:
    first, second = await waiting_run(), await waiting_run()
    inbox = await _stream(as_bob, "interrupts/stream?workflow=expense_approval")
    opened = await inbox.until("ready")
    assert opened[-1].data == {"pending": 4}
    listed_at = opened[-1].id
    await inbox.close()

    early = HeldAppend(first["id"], "late-early")  # draws the lower entry id, commits last
    held.append(early)
    early.thread.start()
    assert early.inserted.wait(30) and not early.failed
    await sync_to_async(_ask)(second["id"], "quick")  # a higher id, committed now
    assert await sync_to_async(_entry_id)(second["id"], "quick") > 0

    away = await _stream(
        as_bob, "interrupts/stream?workflow=expense_approval", **{"Last-Event-ID": str(listed_at)}
    )
    seen = await away.until("ready")
    assert [(f.event, f.data["interrupt_id"]) for f in seen[:-1]] == [("pending", "quick")]
    left_at = seen[-1].id  # the client goes away here; the early transaction commits meanwhile
    await away.close()
    live = await _stream(
        as_bob, "interrupts/stream?workflow=expense_approval", **{"Last-Event-ID": str(left_at)}
    )
    assert [f.event for f in await live.until("ready")] == ["ready"]  # not committed yet: nothing
    await sync_to_async(early.commit)()
    assert await sync_to_async(_entry_id)(first["id"], "late-early") < await sync_to_async(_entry_id)(
        second["id"], "quick"
    )

    resumed = await _stream(
        as_bob, "interrupts/stream?workflow=expense_approval", **{"Last-Event-ID": str(left_at)}
    )
    missed = await resumed.until("ready")
    assert [(f.event, f.data["interrupt_id"], f.data["run"]) for f in missed[:-1]] == [
        ("pending", "late-early", first["id"])
    ]
    assert missed[-1].data == {"pending": 6}
    await resumed.close()
    # The stream that was open when it committed sends it too, on its next look.
    await sync_to_async(_ask)(second["id"], "after")
    await ring(second["id"], 0, inbox=True)
    got = [await live.next(), await live.next()]
    assert [(f.event, f.data["interrupt_id"]) for f in got] == [
        ("pending", "late-early"),
        ("pending", "after"),
    ]
    await live.close()
    again = await _stream(
        as_bob, "interrupts/stream?workflow=expense_approval", **{"Last-Event-ID": str(got[0].id)}
    )
    assert [(f.event, f.data.get("interrupt_id")) for f in await again.until("ready")] == [
        ("pending", "after"),
        ("ready", None),
    ]
    await again.close()


@pytest.mark.parametrize(
    "token",
    [
        "1:2:3",
        "9:3:",
        "5:9:4",
        "5:9:7,6",
        "1:2:~1:2:~x",
        "abc",
        "1~2",
        "9" * 19,
        "١٢",
        "1:2:,",
        "1:2:~3:4:~5~6",
    ],
)
async def test_a_position_that_is_not_one_the_stream_gave_is_refused(as_bob: Api, token: str) -> None:
    if token.isascii():
        refused = await as_bob.get("interrupts/stream", **{"Last-Event-ID": token})
        assert refused.status_code == 400 and refused.json()["type"] == "/api/v1/problems/bad-request"
    refused = await as_bob.get(f"interrupts/stream?after={quote(token)}")
    expected = "bad-request" if refused.status_code == 400 else "validation"  # the pattern of `after`
    assert refused.status_code in (400, 422) and refused.json()["type"] == f"/api/v1/problems/{expected}"
