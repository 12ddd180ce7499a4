"""Leases: a worker that lost its lease writes nothing; live leases keep other workers away."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import ThreadSensitiveContext, sync_to_async

from engine import Interrupt as EngineInterrupt
from engine.testing import stamp
from tests.wfapp.flows import count
from tests.wfapp.helpers import embedded_only, settled
from wfapp.errors import LeaseLostError
from wfapp.models import Interrupt, Session
from wfapp.runs import runtime, starting
from wfapp.runs.runtime import Runtime
from wfapp.store import lease as leases
from wfapp.store.events import DjangoEventStore
from wfapp.store.lease import Release


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
    held, lease = await starting.create_run("approval", {"n": 1}, owner="elsewhere:1:cli")
    assert lease is not None
    await engine_runtime.sweep()
    session = await Session.objects.aget(pk=held)
    assert (session.lease_owner, session.last_seq) == ("elsewhere:1:cli", 0)

    # One whose owner process on this host has exited is taken up at once.
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    dead_owner = f"{leases.new_owner().split(':')[0]}:{gone.stdout.strip()}:cli"
    orphan, _ = await starting.create_run("approval", {"n": 2}, owner=dead_owner)
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


@embedded_only("the embedded runtime renews the leases of its runs in flight")
async def test_a_renewal_never_stops_a_run_claimed_while_it_ran(
    transactional_db: None, workflows: None, settings: Any, test_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WFAPP_LEASE_SECONDS = 0.6  # a renewal every 0.2 s
    renewing, resume = threading.Event(), threading.Event()
    renewals: list[set[str]] = []
    real_renew = leases.renew

    def renew_held_open(owner: str, *args: Any) -> set[str]:
        # The first renewal stays in flight until the test has a run claimed meanwhile.
        lost = real_renew(owner, *args)
        if not renewals:
            renewing.set()
            assert resume.wait(15)
        renewals.append(lost)
        return lost

    monkeypatch.setattr(leases, "renew", renew_held_open)
    started = Runtime(sweep=False)
    runtime.install(started)
    stopping = asyncio.Event()

    async def serve() -> None:
        # The runtime's maintenance gets a thread of its own, so a renewal held open there does
        # not hold up the claims made meanwhile (a server's runtime and its requests differ too).
        async with ThreadSensitiveContext():
            await started.start()
            await stopping.wait()

    serving = asyncio.ensure_future(serve())
    try:
        assert await asyncio.to_thread(renewing.wait, 15)
        session_id = await starting.start_run("blocking", {"n": 1})
        async with asyncio.timeout(15):
            while not count("blocking.wait"):
                await asyncio.sleep(0.02)
        resume.set()
        async with asyncio.timeout(15):  # the renewal judged its result, and another ran since
            while len(renewals) < 3:
                await asyncio.sleep(0.02)
        assert started.is_advancing(session_id)
        (test_dir / "release").write_text("go")
        assert (await settled(session_id, "completed")).output == {"done": {"n": 1}}
    finally:
        resume.set()
        stopping.set()
        await serving
        await started.stop()
        runtime.install(None)


async def test_a_renewal_reports_only_the_runs_another_claim_took(transactional_db: None) -> None:
    store = DjangoEventStore()
    for session_id in ("kept", "released", "taken"):
        await store.create_session(session_id, "wf", None)
    held = {s: await sync_to_async(leases.claim)(s, "host:1:a", 30) for s in ("kept", "released", "taken")}
    epochs = {s: lease.epoch for s, lease in held.items() if lease is not None}
    await sync_to_async(leases.drop)(held["released"])  # settled here meanwhile: not lost
    await sync_to_async(leases.claim)("taken", "host:2:b", 30, force=True)
    assert await sync_to_async(leases.renew)("host:1:a", epochs, 30) == {"taken"}
