"""Live figures against a real server: event push latency and answer-to-completion.

Both drive the dashboard as a browser would: log in with the login form, start runs with the
workflow's start form, open the run page's websocket (``/ws/runs/<id>/``) and say hello, read
the answer form out of the fragment that brings the question, and post it with htmx's headers.

- Push latency: a ``bench_push`` run emits its events one commit at a time (after the
  go-ahead question is answered, so the socket is listening). For each event, the arrival of
  the first frame carrying it (``data-seq``) minus (a) the event's ``timestamp``, taken when
  the event is created just before its commit, so an upper bound that includes the commit,
  and (b) the moment its commit's doorbell was about to ring, noted by the server (see
  ``dashboard_flows``), i.e. from the commit done.
- Answer-to-completion: a ``bench_ask`` run waits for one yes/no answer, then has one trivial
  step left. The clock starts before the answer POST and stops when the frame carrying the
  run's completion event arrives on the run page's socket.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from bench.dashboard_client import Browser, Server, Socket, answer_form
from bench.dashboard_stats import percentiles

COMPLETED = re.compile(r'class="status completed"|id="run-status"[^>]*>\s*completed')
_db = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-db")  # Django's ORM is synchronous


async def db[T](fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.get_running_loop().run_in_executor(_db, fn, *args)


async def thread[T](fn: Callable[..., T], *args: Any) -> T:
    return await asyncio.to_thread(fn, *args)


def _events(session_id: str) -> list[dict[str, Any]]:
    from wfapp.models import Event

    rows = Event.objects.filter(session_id=session_id).order_by("seq")
    return [dict(row) for row in rows.values("seq", "kind", "timestamp", "data")]


def _status(session_id: str) -> str:
    from wfapp.models import Session

    return str(Session.objects.values_list("status", flat=True).get(pk=session_id))


def _close_db() -> None:
    from django.db import connections

    connections.close_all()


def _cookies(browser: Browser) -> str:
    return "; ".join(f"{c.name}={c.value}" for c in browser.jar)


async def _open_run(server: Server, browser: Browser, run: str) -> Socket:
    ws = await Socket(server.base, f"/ws/runs/{run}/?after=0", _cookies(browser)).__aenter__()
    await ws.send({"type": "hello", "last_seq": 0, "reconnect": False})
    return ws


async def _completion(ws: Socket, run: str, timeout: float = 60.0, poll: float = 0.01) -> tuple[float, bool]:
    """When the frame carrying the run's completion event arrived, and whether the page's
    status badge said "completed" by then.

    The run's end is learnt from the database (a single-row read every `poll` s from this
    process; the frame's arrival is stamped by the socket's reader, so polling delays nothing).
    """
    deadline = time.monotonic() + timeout
    while await db(_status, run) != "completed":
        if time.monotonic() > deadline:
            raise RuntimeError(f"run {run} did not complete within {timeout:.0f} s")
        await asyncio.sleep(poll)
    events = await db(_events, run)
    done = [e["seq"] for e in events if e["kind"] == "status" and e["data"].get("status") == "completed"]
    if not done:
        raise RuntimeError(f"run {run} is completed but has no completion event")
    try:
        at, _ = await ws.wait_for(lambda text: f'data-seq="{done[-1]}"' in text, 10.0)
    except TimeoutError:
        seqs = sorted(ws.seq_arrivals())
        raise RuntimeError(
            f"run {run}: its completion event (seq {done[-1]}) never reached its page; "
            f"{len(ws.frames)} frames, events seen {seqs[:3]}..{seqs[-3:]}"
        ) from None
    return at, any(COMPLETED.search(text) for _, text in ws.frames)


async def push(server: Server, browser: Browser, events: int, pause_ms: int) -> dict[str, Any]:
    run = await thread(browser.start, "bench_push", {"events": str(events), "pause_ms": str(pause_ms)})
    ws = await _open_run(server, browser, run)
    try:
        _, form = await ws.wait_for(answer_form)
        reply = await thread(browser.answer, form)
        if reply.status != 200:
            raise RuntimeError(f"answering the go-ahead failed: {reply.status} {reply.body[:300]}")
        await _completion(ws, run, timeout=60 + events * pause_ms / 1000 * 3, poll=0.1)
    finally:
        await ws.__aexit__(None, None, None)
    rows = await db(_events, run)
    pushed = [r for r in rows if r["kind"] == "state" and "pushed" in (r["data"].get("state") or {})]
    if len(pushed) != events:
        raise RuntimeError(f"the run committed {len(pushed)} of {events} pushed events")
    arrived = ws.seq_arrivals()
    missing = [r["seq"] for r in pushed if r["seq"] not in arrived]
    if missing:
        raise RuntimeError(f"{len(missing)} pushed events never reached the socket (first: {missing[:5]})")
    commits = server.commits().get(run, [])

    def committed(seq: int) -> float | None:
        return next((at for s, at in commits if s >= seq), None)

    upper = [arrived[r["seq"]] - r["timestamp"] for r in pushed]
    rung = [committed(r["seq"]) for r in pushed]
    after_commit = [arrived[r["seq"]] - at for r, at in zip(pushed, rung, strict=True) if at is not None]
    frames = {arrived[r["seq"]] for r in pushed}
    return {
        "events": events,
        "pause_ms": pause_ms,
        "run": run,
        "frames": len(frames),  # fewer than events when one frame carried several
        "commits": len({at for at in rung if at is not None}),
        "from_timestamp": {**percentiles(upper), "samples_s": [round(x, 6) for x in upper]},
        "from_commit": {**percentiles(after_commit), "samples_s": [round(x, 6) for x in after_commit]},
    }


async def answer_to_completion(server: Server, browser: Browser, samples: int, warmup: int) -> dict[str, Any]:
    totals: list[float] = []
    posts: list[float] = []
    badge_missed = 0
    for i in range(warmup + samples):
        run = await thread(browser.start, "bench_ask", {})
        ws = await _open_run(server, browser, run)
        try:
            _, form = await ws.wait_for(answer_form)
            while await db(_status, run) != "waiting":  # the turn that asked has closed
                await asyncio.sleep(0.02)
            await asyncio.sleep(0.2)  # a person takes longer than this to answer
            t0 = time.time()
            reply = await thread(browser.answer, form)
            t_post = time.time()
            if reply.status != 200:
                raise RuntimeError(f"the answer POST failed: {reply.status} {reply.body[:300]}")
            arrived, badge = await _completion(ws, run)
        finally:
            await ws.__aexit__(None, None, None)
        if i >= warmup:
            totals.append(arrived - t0)
            posts.append(t_post - t0)
            badge_missed += not badge
    return {
        "samples": samples,
        "warmup": warmup,
        "to_completion": {**percentiles(totals), "samples_s": [round(x, 6) for x in totals]},
        "answer_post": {**percentiles(posts), "samples_s": [round(x, 6) for x in posts]},
        # Runs whose page got the completion event but whose status badge never said
        # "completed" (the run page renders the head from a session row read before the events).
        "status_badge_missed": badge_missed,
    }


async def measure(server: Server, username: str, password: str, size: dict[str, int]) -> dict[str, Any]:
    browser = Browser(server.base)
    await thread(browser.login, username, password)
    try:
        # The answers first: their warm-up runs warm the server up for the push run too.
        answered = await answer_to_completion(server, browser, size["answers"], size["answer_warmup"])
        pushed = await push(server, browser, size["push_events"], size["push_pause_ms"])
    finally:
        await db(_close_db)
    return {"push": pushed, "answer": answered}
