"""Group commit: many runs' node appends share transactions; each run's log stays its own and whole."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from asgiref.sync import sync_to_async

from engine import START, FunctionNode, Runner, Workflow
from engine.errors import ConcurrencyError
from engine.testing import stamp
from wfapp.errors import LeaseLostError
from wfapp.store import lease as leases
from wfapp.store.events import DjangoEventStore, close_connections


def inc(node_input: int) -> int:
    return node_input + 1


CHAIN = Workflow(name="chain", edges=[(START, *(FunctionNode(inc, name=f"n{i}") for i in range(10)))])


@pytest.fixture
async def grouped(transactional_db: None) -> Any:
    yield DjangoEventStore(own_thread=True, group_commit=True)
    await close_connections()


async def test_concurrent_runs_share_commits_and_each_completes_whole(grouped: DjangoEventStore) -> None:
    runners = [Runner(CHAIN, store=grouped) for _ in range(20)]
    results = await asyncio.gather(*(runner.run(i) for i, runner in enumerate(runners)))

    assert [(r.status, r.output) for r in results] == [("completed", i + 10) for i in range(20)]
    fresh = DjangoEventStore()  # reads the database, not this process's kept logs
    for result in results:
        events = await fresh.list_events(result.session_id)
        assert [e.seq for e in events] == list(range(1, len(events) + 1))
        assert [e.node_path for e in events if e.kind == "completed"][:10] == [
            f"chain@1/n{i}@1" for i in range(10)
        ]
    group = grouped.group_commit
    assert group is not None and group.appends >= 20 * 10
    assert group.transactions < group.appends  # commits were shared


async def test_a_refused_append_writes_nothing_and_the_rest_of_its_group_commits(
    grouped: DjangoEventStore,
) -> None:
    for session_id in ("a", "b"):
        await grouped.create_session(session_id, "wf", None)
    node = [{"kind": "started", "node_path": "wf@1/x@1"}]
    stale, fine = stamp("a", 5, node), stamp("b", 1, node)

    outcomes = await asyncio.gather(
        grouped.append("a", stale, expected_seq=4),
        grouped.append("b", fine, expected_seq=0),
        return_exceptions=True,
    )

    assert isinstance(outcomes[0], ConcurrencyError) and outcomes[1] == 1
    fresh = DjangoEventStore()
    assert await fresh.list_events("a") == []
    assert [e.seq for e in await fresh.list_events("b")] == [1]


async def test_a_lost_lease_is_refused_in_its_group_and_the_holder_commits_beside_it(
    grouped: DjangoEventStore,
) -> None:
    for session_id in ("a", "b"):
        await grouped.create_session(session_id, "wf", None)
    stale = await sync_to_async(leases.claim)("a", "host:1:x", 30)
    await sync_to_async(leases.claim)("a", "host:2:y", 30, force=True)
    held = await sync_to_async(leases.claim)("b", "host:1:x", 30)
    assert stale is not None and held is not None
    node = [{"kind": "started", "node_path": "wf@1/x@1", "output": {"big": 'é"\\' * 3000, "at": 0.1}}]
    sent = stamp("b", 1, node)

    outcomes = await asyncio.gather(
        DjangoEventStore(stale, own_thread=True).append("a", stamp("a", 1, node), expected_seq=0),
        DjangoEventStore(held, own_thread=True).append("b", sent, expected_seq=0),
        return_exceptions=True,
    )

    assert isinstance(outcomes[0], LeaseLostError) and outcomes[1] == 1
    assert await DjangoEventStore().list_events("a") == []
    [written] = await DjangoEventStore().list_events("b")  # read back from the database as sent
    assert written == sent[0]


async def test_a_cancelled_appender_still_hears_its_refusal(grouped: DjangoEventStore) -> None:
    """A turn cancelled while its batch commits (its lease was lost, say) leaves no unheard error."""
    await grouped.create_session("a", "wf", None)
    unheard: list[dict[str, Any]] = []
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _, context: unheard.append(context))
    try:
        appending = asyncio.ensure_future(
            grouped.append("a", stamp("a", 5, [{"kind": "started", "node_path": "wf@1/x@1"}]), expected_seq=4)
        )
        await asyncio.sleep(0)  # queued: its commit is under way
        appending.cancel()
        with pytest.raises(asyncio.CancelledError):
            await appending
        group = grouped.group_commit
        assert group is not None
        while group.appends == 0:  # the commit finishes and refuses it
            await asyncio.sleep(0.01)
        del appending
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert unheard == []
    assert await DjangoEventStore().list_events("a") == []


async def test_grouping_is_on_by_default_only_for_the_runtimes_stores_on_postgresql(db: None) -> None:
    from django.db import connection

    postgres = connection.vendor == "postgresql"
    assert (DjangoEventStore(own_thread=True).group_commit is not None) is postgres
    assert DjangoEventStore().group_commit is None
