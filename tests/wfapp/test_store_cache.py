"""The Django store keeps active runs' logs and reads only what was appended since, across processes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from asgiref.sync import sync_to_async
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test.utils import CaptureQueriesContext

from engine import Runner
from engine.testing import stamp
from tests.wfapp.flows import approval
from tests.wfapp.helpers import subprocess_env
from wfapp.models import Event as EventRow
from wfapp.models import Session
from wfapp.store.events import DjangoEventStore

ROOT = Path(__file__).resolve().parents[2]


def _uncached(session_id: str) -> list:  # type: ignore[type-arg]
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")  # a plain read, as a process with nothing kept does
    return DjangoEventStore().list_events_sync(session_id, 0, limit=10_000)


async def test_events_another_process_appended_are_read_after_the_kept_ones(
    transactional_db: None, queue_worker: None
) -> None:
    store = DjangoEventStore(own_thread=True)
    runner = Runner(approval, store=store)
    waiting = await runner.run({"amount": 5})
    assert waiting.status == "waiting"
    before = await store.list_events(waiting.session_id)  # kept from here on

    user = await sync_to_async(User.objects.create_user)("ann")
    permission = await Permission.objects.aget(codename="answer_interrupt")
    await sync_to_async(user.user_permissions.add)(permission)
    answer = ["wf", "answer", waiting.session_id, "ok", "--answer", '{"approved": true}', "--user", "ann"]
    # Not in the thread Django shares with sync_to_async: a worker thread may need it meanwhile.
    answered = await sync_to_async(subprocess.run, thread_sensitive=False)(
        [sys.executable, "manage.py", *answer],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert answered.returncode == 0, answered.stderr

    after = await store.list_events(waiting.session_id)
    assert after[: len(before)] == before and len(after) > len(before)
    assert after == await sync_to_async(_uncached)(waiting.session_id)
    assert [e.seq for e in after] == list(range(1, len(after) + 1))
    assert (await runner.result(waiting.session_id)).output == {"approved": True}


async def test_a_kept_log_costs_one_query_for_the_session_row(transactional_db: None) -> None:
    store = DjangoEventStore(own_thread=True)
    waiting = await Runner(approval, store=store).run({"amount": 5})
    first = await store.list_events(waiting.session_id)

    def read_again() -> tuple[list, int]:  # type: ignore[type-arg]
        with CaptureQueriesContext(connection) as queries:
            events = store.list_events_sync(waiting.session_id)
        return events, len(queries)

    events, queries = await sync_to_async(read_again)()
    assert events == first and queries == 1
    assert await store.list_events(waiting.session_id, after_seq=3) == first[3:]


async def test_a_session_made_again_under_the_same_id_is_read_afresh(transactional_db: None) -> None:
    store = DjangoEventStore(own_thread=True)
    await store.create_session("s", "wf", None)
    old = [{"kind": "started", "node_path": "wf@1/a@1"}, {"kind": "completed", "node_path": "wf@1/a@1"}]
    await store.append("s", stamp("s", 1, old), expected_seq=0)
    assert len(await store.list_events("s")) == 2

    # Another process deletes the run and makes a longer one under the same id.
    await Session.objects.filter(pk="s").adelete()
    await Session.objects.acreate(id="s", workflow="wf", input=None, last_seq=3)
    await EventRow.objects.abulk_create(
        EventRow(session_id="s", seq=seq, kind="started", node_path=f"wf@1/b@{seq}", timestamp=1.0, data={})
        for seq in (1, 2, 3)
    )

    assert [e.node_path for e in await store.list_events("s")] == ["wf@1/b@1", "wf@1/b@2", "wf@1/b@3"]
