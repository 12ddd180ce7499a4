"""The embedded runtime: executes runs inside this process, many at once, each under a lease.

``kick(session_id)`` claims a run and advances it in a task of the runtime's event loop
until it waits or ends; it is safe to call from any thread and returns the turn's future. A
maintenance task renews the leases of the runs in flight and sweeps for runs that need a
worker: runs left ``running`` by a stopped process, and runs answered while no worker was
around; the sweep also purges expired ``Idempotency-Key`` records and fires the human steps'
reminders, escalations and deadlines that are due (``wfapp.runs.timers``). The CLI uses ``drive``
directly, in its own process, under its own lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
import threading
from collections.abc import Callable, Coroutine
from concurrent.futures import Future
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from engine import NodeGate, Runner, RunResult
from engine.errors import ConcurrencyError, SessionStateError
from wfapp.errors import LeaseLostError, VersionNotDeployedError
from wfapp.registry import get_workflow
from wfapp.runs import timers
from wfapp.runs.mode import workers_mode
from wfapp.store import doorbell, idempotency
from wfapp.store import lease as leases
from wfapp.store.cache import FOLDED
from wfapp.store.events import DjangoEventStore, close_connections
from wfapp.store.lease import Lease, Release
from wfapp.store.watch import POLL_SECONDS, ChangeWatch

logger = logging.getLogger(__name__)

# The result of one turn of a run in a runtime, awaitable from any thread or loop.
Turn = Future[RunResult | None]

# Advances that change nothing before the runtime gives up on a run (an engine bug, not a loop).
_MAX_IDLE_ADVANCES = 3

# Loops the embedded runtime runs beside its runs while it sweeps (the notification pump), added by
# the layers above at start-up (``wfapp.apps``) so this layer imports none of them. Workers mode
# runs them as periodic jobs instead.
COMPANIONS: list[Callable[[], Coroutine[Any, Any, None]]] = []


class Runtime:
    """Runs workflows in one event loop; ``start`` binds it to the running loop."""

    def __init__(self, *, owner: str | None = None, sweep: bool = True, watch: bool | None = None) -> None:
        self.owner = owner or leases.new_owner()
        self.sweep_enabled = sweep
        # Ring for other processes' commits when the channel layer cannot carry them across.
        in_memory = doorbell.process_local()
        self.watch = ChangeWatch() if (sweep and in_memory if watch is None else watch) else None
        self.ttl = float(settings.WFAPP_LEASE_SECONDS)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: dict[str, asyncio.Task[RunResult | None]] = {}
        self._leases: dict[str, Lease] = {}  # the lease each task in ``_tasks`` drives under
        self._runners: dict[str, Runner] = {}
        self._maintenance: asyncio.Task[None] | None = None
        self.gate = NodeGate()  # closed by ``drain``
        self._companions: list[asyncio.Task[None]] = []

    @property
    def running(self) -> bool:
        return self._loop is not None and not self._loop.is_closed()

    async def start(self) -> None:
        """Bind to the running loop, take up runs left behind, and start lease maintenance."""
        if self.running:
            return
        self._loop = asyncio.get_running_loop()
        if self.sweep_enabled:
            await self.sweep()
        self._maintenance = asyncio.ensure_future(self._maintain())
        if self.sweep_enabled and not workers_mode():  # workers mode: a periodic job (notify_tasks)
            self._companions = [asyncio.ensure_future(loop()) for loop in COMPANIONS]

    async def stop(self) -> None:
        """Stop executing: cancel the runs in flight and free their leases for the next start."""
        for background in (self._maintenance, *self._companions):
            if background is not None:
                background.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await background
        self._companions = []
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await sync_to_async(leases.drop_all)(self.owner)
        await close_connections()
        self._loop = None

    async def drain(self, grace: float) -> list[str]:
        """Stop the turns in flight at node boundaries; return the runs cut (still running).

        Nodes already executing get up to ``grace`` seconds to finish and record their outcome;
        no new node starts. Turns that end meanwhile (waiting, completed) end as usual; the
        others are cancelled once no node of theirs is executing, or when ``grace`` is over
        (a node still executing then runs again wherever the run resumes).
        """
        self.gate.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(grace):
                await self.gate.wait_idle()
        cut = [session_id for session_id, task in self._tasks.items() if not task.done()]
        tasks = [self._tasks[session_id] for session_id in cut]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        return cut

    def kick(self, session_id: str, *, retry: bool = False) -> Turn | None:
        """Claim the run and advance it in the background (from any thread).

        Returns the turn: a future of its result once the run is settled here (None when
        another live worker holds the run, or this turn lost it); None when no runtime runs
        in this process (the next sweep takes the run up).
        """
        loop = self._loop
        if loop is None or loop.is_closed():
            logger.info("no runtime runs in this process; run %s waits for the next sweep", session_id)
            return None
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        # A fresh context: the caller's may tie sync_to_async to an async_to_sync executor
        # (a sync view's, say) that is gone by the time the run executes.
        fresh = contextvars.Context()
        turn: Turn = Future()
        if running is loop:
            loop.call_soon(self._spawn, session_id, retry, turn, context=fresh)
        else:
            loop.call_soon_threadsafe(self._spawn, session_id, retry, turn, context=fresh)
        return turn

    def _spawn(self, session_id: str, retry: bool, turn: Turn) -> None:
        task = asyncio.ensure_future(self._claim_and_drive(session_id, retry))
        task.add_done_callback(log_failure)
        task.add_done_callback(lambda claimed: self._follow(session_id, claimed, turn))

    def _follow(self, session_id: str, claimed: asyncio.Task[None], turn: Turn) -> None:
        """Settle ``turn`` with the result of the run's turn here (ours or one already running)."""
        drive = self._tasks.get(session_id)
        if claimed.cancelled() or claimed.exception() is not None or drive is None:
            _resolve(turn, None)
            return

        def settle(done: asyncio.Task[RunResult | None]) -> None:
            failed = done.cancelled() or done.exception() is not None
            _resolve(turn, None if failed else done.result())

        drive.add_done_callback(settle)

    async def _claim_and_drive(self, session_id: str, retry: bool) -> None:
        if session_id in self._tasks and not self._tasks[session_id].done():
            return  # our own task settles it: its release sees any newer events
        lease = await sync_to_async(leases.claim)(session_id, self.owner, self.ttl)
        if lease is None:
            return  # held by a live worker, whose release sees any newer events
        task = asyncio.ensure_future(self.drive(lease, retry=retry))
        self._tasks[session_id] = task
        self._leases[session_id] = lease
        task.add_done_callback(log_failure)
        task.add_done_callback(lambda _: self._forget(session_id, task))

    async def advance_here(self, session_id: str, *, retry: bool = False) -> RunResult | None:
        """Claim the run and advance it, returning once it is settled (a worker's job does this);
        None when another live worker holds the run or takes it over meanwhile."""
        await self._claim_and_drive(session_id, retry)
        task = self._tasks.get(session_id)
        return None if task is None else await task

    def is_advancing(self, session_id: str) -> bool:
        """Whether a turn of this run is in flight in this runtime."""
        task = self._tasks.get(session_id)
        return task is not None and not task.done()

    def _forget(self, session_id: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(session_id) is task:
            del self._tasks[session_id]
            del self._leases[session_id]

    async def drive(self, lease: Lease, *, retry: bool = False) -> RunResult | None:
        """Advance the leased run until it is settled; None if the lease was lost."""
        session_id = lease.session_id
        store = DjangoEventStore(lease, own_thread=True)  # this task runs on the runtime's loop
        info = await store.get_session(session_id)
        try:
            workflow = get_workflow(info.workflow, info.version)
        except VersionNotDeployedError as missing:  # it stays as it is until that version is back
            logger.info("run %s waits: %s", session_id, missing)
            await sync_to_async(leases.drop)(lease)
            return None
        runner = Runner(workflow, store=store, gate=self.gate, folded=FOLDED)
        self._runners[session_id] = runner
        result: RunResult | None = None
        idle = 0
        try:
            while True:
                before = info.last_seq
                try:
                    if before == 0 and info.status == "running":
                        result = await runner.run(info.input, session_id=session_id)
                    elif retry:
                        retry = False
                        result = await runner.resume(session_id, {})
                    else:
                        result = await runner.advance(session_id)
                except ConcurrencyError:
                    pass  # an answer was appended meanwhile: read the log again and go on
                except SessionStateError:
                    pass  # cancelled or completed by someone else: the release below settles it
                outcome = await sync_to_async(leases.release)(lease)
                if outcome is Release.RELEASED:
                    return result
                if outcome is Release.LOST:
                    return None
                info = await store.get_session(session_id)
                idle = idle + 1 if info.last_seq == before else 0
                if idle >= _MAX_IDLE_ADVANCES:
                    logger.error("run %s makes no progress; leaving it for the next sweep", session_id)
                    return result
        except LeaseLostError:
            logger.info("run %s was taken over by another worker", session_id)
            return None
        finally:
            self._runners.pop(session_id, None)

    async def cancel_local(
        self, session_id: str, actor: str | None, reason: str | None = None
    ) -> RunResult | None:
        """Cancel a run this runtime is executing; None if it executes no such run."""
        runner = self._runners.get(session_id)
        if runner is None:
            return None
        return await runner.cancel(session_id, actor=actor, reason=reason)

    async def sweep(self) -> None:
        """Claim and advance every run that needs a worker and has none; purge what expired; then
        record the human steps' reminders, escalations and deadlines that are due (``wfapp.runs.timers``)."""
        for session_id in await sync_to_async(leases.runs_needing_work)():
            if session_id not in self._tasks:
                await self._claim_and_drive(session_id, False)
        await sync_to_async(idempotency.purge_expired)()
        for session_id in await timers.fire_due():
            if not workers_mode():  # workers mode queued the advance with the answer
                self.kick(session_id)

    async def wait_idle(self, timeout: float = 30.0) -> None:
        """Wait until no run is in flight here (tests and the CLI use it)."""
        async with asyncio.timeout(timeout):
            while self._tasks:
                await asyncio.gather(*list(self._tasks.values()), return_exceptions=True)

    async def _maintain(self) -> None:
        tick = min(1.0, self.ttl / 3, float(settings.WFAPP_SWEEP_SECONDS))
        if self.watch is not None:
            tick = min(tick, POLL_SECONDS)  # other processes' commits reach pages promptly
        due = {"renew": self.ttl / 3, "sweep": float(settings.WFAPP_SWEEP_SECONDS)}
        elapsed = dict.fromkeys(due, 0.0)
        while True:
            await asyncio.sleep(tick)
            for job in elapsed:
                elapsed[job] += tick
            try:
                if elapsed["renew"] >= due["renew"]:
                    elapsed["renew"] = 0.0
                    await self._renew()
                if self.sweep_enabled and elapsed["sweep"] >= due["sweep"]:
                    elapsed["sweep"] = 0.0
                    await self.sweep()
                if self.watch is not None:
                    await self.ring_changes()
            except Exception:
                logger.exception("runtime maintenance failed; retrying")

    async def _renew(self) -> None:
        # Judge only the tasks that held a lease when the renewal began: runs claimed while it
        # ran (answers kick runs at any time) were never part of it.
        before = {session_id: (task, self._leases[session_id]) for session_id, task in self._tasks.items()}
        epochs = {session_id: lease.epoch for session_id, (_, lease) in before.items()}
        for session_id in await sync_to_async(leases.renew)(self.owner, epochs, self.ttl):
            task = before[session_id][0]
            if self._tasks.get(session_id) is task and not task.done():
                logger.warning(
                    "run %s was taken over by another worker (its lease lapsed); stopping it here", session_id
                )
                task.cancel()

    async def ring_changes(self) -> None:
        """Ring for runs that other processes changed (see ``wfapp.store.watch``)."""
        assert self.watch is not None
        for row in await sync_to_async(self.watch.changed)(self.owner):
            await doorbell.ring(row["id"], row["last_seq"], runs=True, inbox=True)


def _resolve(turn: Turn, result: RunResult | None) -> None:
    if turn.set_running_or_notify_cancel():  # False: the waiter gave up on it (cancelled)
        turn.set_result(result)


def log_failure(task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("runtime task failed", exc_info=task.exception())


_current: Runtime | None = None
_current_lock = threading.Lock()


def current() -> Runtime:
    """The runtime of this process (created on first use, started by the serving command)."""
    global _current
    with _current_lock:
        if _current is None:
            _current = Runtime()
        return _current


def install(runtime: Runtime | None) -> None:
    """Make ``runtime`` the process's runtime (the serving command and tests do this)."""
    global _current
    with _current_lock:
        _current = runtime
