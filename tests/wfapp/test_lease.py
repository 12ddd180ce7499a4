"""Leases: a worker that lost its lease writes nothing; live leases keep other workers away."""

from __future__ import annotations

import subprocess
import sys

import pytest
from asgiref.sync import sync_to_async

from engine import Interrupt as EngineInterrupt
from engine.testing import stamp
from tests.wfapp.helpers import settled
from wfapp import lease as leases
from wfapp import services
from wfapp.errors import LeaseLostError
from wfapp.lease import Release
from wfapp.models import Interrupt, Session
from wfapp.runtime import Runtime
from wfapp.store import DjangoEventStore


async def test_a_worker_that_lost_its_lease_writes_nothing(transactional_db: None) -> None:
    await DjangoEventStore().create_session("s1", "wf", None)
    first = await sync_to_async(leases.claim)("s1", "host:1:a", 30)
    assert first is not None and first.epoch == 1
    assert await sync_to_async(leases.claim)("s1", "host:2:b", 30) is None  # held and live
    second = await sync_to_async(leases.claim)("s1", "host:2:b", 30, force=True)
    assert second is not None and second.epoch == 2

    stale = DjangoEventStore(first)
    with pytest.raises(LeaseLostError):
        await stale.append("s1", stamp("s1", 1, [{"kind": "started"}]), expected_seq=0)
    with pytest.raises(LeaseLostError):
        await stale.set_status("s1", "failed")
    assert await stale.list_events("s1") == []
    assert (await Session.objects.aget(pk="s1")).status == "running"

    assert (
        await DjangoEventStore(second).append("s1", stamp("s1", 1, [{"kind": "started"}]), expected_seq=0)
        == 1
    )
    assert await sync_to_async(leases.release)(first) is Release.LOST


async def test_release_waits_for_events_after_the_last_settled_status(transactional_db: None) -> None:
    store = DjangoEventStore()
    await store.create_session("s2", "wf", None)
    lease = await sync_to_async(leases.claim)("s2", "host:1:a", 30)
    assert lease is not None
    ask = EngineInterrupt(id="ok", node_path="wf@1/ask@1", message="ok?")
    waiting = [
        {"kind": "interrupt", "node_path": ask.node_path, "interrupt": ask},
        {"kind": "status", "status": "waiting"},
    ]
    await store.append("s2", stamp("s2", 1, waiting), expected_seq=0)
    await store.append("s2", stamp("s2", 3, [{"kind": "state", "state": {"late": True}}]), expected_seq=2)
    assert await sync_to_async(leases.release)(lease) is Release.MORE_WORK
    await store.append("s2", stamp("s2", 4, [{"kind": "status", "status": "waiting"}]), expected_seq=3)
    assert await sync_to_async(leases.release)(lease) is Release.RELEASED
    assert (await Session.objects.aget(pk="s2")).lease_owner is None


async def test_the_runtime_leaves_a_live_lease_alone_and_takes_a_dead_ones(engine_runtime: Runtime) -> None:
    # A run started by another live process (a CLI, say) is that process's to execute.
    held, lease = await services.create_run("approval", {"n": 1}, owner="elsewhere:1:cli")
    assert lease is not None
    await engine_runtime.sweep()
    session = await Session.objects.aget(pk=held)
    assert (session.lease_owner, session.last_seq) == ("elsewhere:1:cli", 0)

    # One whose owner process on this host has exited is taken up at once.
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_owner = f"{leases.new_owner().split(':')[0]}:{gone.stdout.strip()}:cli"
    orphan, _ = await services.create_run("approval", {"n": 2}, owner=dead_owner)
    await engine_runtime.sweep()
    session = await settled(orphan, "waiting")
    assert session.last_seq > 0 and session.lease_epoch == 2


async def test_a_run_waiting_for_nothing_is_not_settled(transactional_db: None) -> None:
    """An answer that lands as the engine closes its turn can leave "waiting" with nothing pending."""
    await DjangoEventStore().create_session("s3", "wf", None)
    lease = await sync_to_async(leases.claim)("s3", "host:1:a", 30)
    assert lease is not None
    await Session.objects.filter(pk="s3").aupdate(status="waiting", last_seq=4, settled_seq=4)
    assert await sync_to_async(leases.release)(lease) is Release.MORE_WORK
    await sync_to_async(leases.drop)(lease)
    assert "s3" in await sync_to_async(leases.runs_needing_work)()

    await Interrupt.objects.acreate(
        session_id="s3", interrupt_id="ask", request_seq=3, workflow="wf", node_path="wf@1/ask@1"
    )
    assert "s3" not in await sync_to_async(leases.runs_needing_work)()
    again = await sync_to_async(leases.claim)("s3", "host:1:a", 30)
    assert again is not None and await sync_to_async(leases.release)(again) is Release.RELEASED
