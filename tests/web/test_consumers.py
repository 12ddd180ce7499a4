"""Websocket consumers: authentication, origin, 404 for unknown runs, live fragments, backlog."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from engine import Runner
from tests.web.conftest import BIG_EXPENSE, make_user
from wfapp.asgi import application
from wfapp.models import Interrupt, InterruptStatus, Session
from wfapp.registry import get_workflow
from wfapp.runs import answering, starting
from wfapp.store.events import DjangoEventStore, close_connections

ORIGIN = (b"origin", b"http://localhost")


@pytest.fixture(autouse=True)
async def _close_thread_connections() -> AsyncIterator[None]:
    yield
    await close_connections()


@pytest.fixture
async def olga(transactional_db: None) -> User:
    return await sync_to_async(make_user)("olga", may_answer=True)


@pytest.fixture
async def vera(transactional_db: None) -> User:
    return await sync_to_async(make_user)("vera", may_answer=False)


def _cookie(user: User) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def socket(
    path: str, user: User | None = None, origin: tuple[bytes, bytes] = ORIGIN
) -> WebsocketCommunicator:
    headers = [origin]
    if user is not None:
        headers.append((b"cookie", await sync_to_async(_cookie)(user)))
    return WebsocketCommunicator(application, path, headers=headers)


async def start(node_input: dict[str, Any] | None = None, user: User | None = None) -> str:
    session_id, _ = await starting.create_run("expense_approval", node_input or BIG_EXPENSE, user=user)
    await Runner(get_workflow("expense_approval"), store=DjangoEventStore()).advance(session_id)
    return session_id


async def advance(session_id: str) -> None:
    await Runner(get_workflow("expense_approval"), store=DjangoEventStore()).advance(session_id)


QUIET = 0.5


async def drain(comm: WebsocketCommunicator, until: str | None = None) -> str:
    """Everything the server sent until it goes quiet (half a second: frames of one backlog can
    come that far apart on a loaded machine); with ``until``, first everything up to a frame that
    contains it, however long the server takes to send that (up to 60 seconds)."""
    parts: list[str] = []
    while until is not None and until not in "".join(parts):
        parts.append(await comm.receive_from(timeout=60))
    while not await comm.receive_nothing(timeout=QUIET):
        parts.append(await comm.receive_from())
    return "".join(parts)


def seqs(html: str) -> list[int]:
    return [int(s) for s in re.findall(r'id="event-(\d+)"', html)]


async def test_anonymous_is_refused(transactional_db: None) -> None:
    comm = await socket("/ws/nav/")
    connected, _ = await comm.connect()
    assert not connected


async def test_wrong_origin_is_refused(olga: User) -> None:
    comm = await socket("/ws/nav/", olga, origin=(b"origin", b"http://evil.example"))
    connected, _ = await comm.connect()
    assert not connected


async def test_unknown_run_is_refused(olga: User) -> None:
    comm = await socket("/ws/runs/nope/", olga)
    connected, _ = await comm.connect()
    assert not connected


async def test_nav_badge_counts_live(olga: User) -> None:
    comm = await socket("/ws/nav/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello"}))
    assert ">0</span>" in await drain(comm)
    await start()
    html = await drain(comm)
    assert 'id="inbox-count" hx-swap-oob="true"' in html
    assert html.rstrip().endswith(">2</span>")
    await comm.disconnect()


async def test_run_page_backlog_after_reconnect_in_order_once(olga: User) -> None:
    run = await start()
    comm = await socket(f"/ws/runs/{run}/?after=0", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 3, "reconnect": True}))
    first = await drain(comm)
    last = max(seqs(first))
    assert seqs(first) == list(range(4, last + 1))
    assert f'data-hello=\'{{"last_seq": {last}}}\' hx-swap-oob="true"' in first
    assert "status-waiting" in first  # the graph came along
    await comm.disconnect()

    # Meanwhile someone answers; a reconnecting page says where it was and gets only the rest.
    row = await Interrupt.objects.filter(session_id=run, interrupt_id="manager-approval").aget()
    await answering.answer_interrupt(run, "manager-approval", {"approved": True}, user=olga, advance=False)
    again = await socket(f"/ws/runs/{run}/?after={last}", olga)
    assert (await again.connect())[0]
    await again.send_to(text_data=json.dumps({"type": "hello", "last_seq": last, "reconnect": True}))
    missed = await drain(again)
    assert seqs(missed) == [last + 1]
    assert "Answered by olga" in missed
    assert f'id="interrupt-{row.pk}" hx-swap-oob="true"' in missed
    await again.disconnect()


async def test_run_page_updates_live_until_completed(olga: User) -> None:
    run = await start({**BIG_EXPENSE, "amount": 500})
    comm = await socket(f"/ws/runs/{run}/?after=0", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    html = await drain(comm)
    assert 'data-node="manager_review" data-status="waiting"' in html
    await answering.answer_interrupt(
        run, "manager-approval", {"approved": True, "comment": "fine"}, user=olga, advance=False
    )
    await advance(run)
    html = await drain(comm)
    assert 'data-node="manager_review" data-status="completed"' in html
    assert '<span class="status completed" id="run-status">' in html
    assert 'id="run-output"' in html
    assert seqs(html) == sorted(set(seqs(html)))
    await comm.disconnect()


async def test_inbox_items_appear_and_close_live(olga: User) -> None:
    comm = await socket("/ws/inbox/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0, "rendered_at": "x"}))
    await drain(comm)
    run = await start()
    html = await drain(comm)
    rows = [r async for r in Interrupt.objects.filter(session_id=run).order_by("pk")]
    assert 'hx-swap-oob="beforeend:#inbox-items"' in html
    for row in rows:
        assert html.count(f'id="interrupt-{row.pk}"') == 1  # each item once, however many doorbells
    await answering.answer_interrupt(run, rows[0].interrupt_id, {"approved": False}, user=olga, advance=False)
    html = await drain(comm)
    assert f'id="interrupt-{rows[0].pk}" hx-swap-oob="true"' in html
    assert "Answered by olga" in html
    assert f'class="card inbox-item" id="interrupt-{rows[1].pk}"' not in html
    await comm.disconnect()


async def test_inbox_rerenders_on_reconnect(olga: User) -> None:
    await start()
    comm = await socket("/ws/inbox/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "reconnect": True}))
    html = await drain(comm)
    assert html.lstrip().startswith(
        '<section id="inbox-list" aria-label="Pending questions" hx-swap-oob="true">'
    )
    assert html.count('class="card inbox-item"') == 2
    await comm.disconnect()


async def test_an_empty_inbox_rerendered_does_not_blame_permissions(olga: User) -> None:
    comm = await socket("/ws/inbox/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "reconnect": True}))
    html = await drain(comm)
    assert "Nothing is waiting for you." in html and "permission" not in html
    await comm.disconnect()


async def test_inbox_socket_shows_nothing_without_permission(vera: User) -> None:
    comm = await socket("/ws/inbox/", vera)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0}))
    await drain(comm)
    await start()
    html = await drain(comm)
    assert "inbox-item" not in html
    assert await sync_to_async(Interrupt.objects.filter(status=InterruptStatus.PENDING).count)() == 2
    await comm.disconnect()


async def test_runs_list_inserts_new_runs_and_updates_status(olga: User) -> None:
    comm = await socket("/ws/runs/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello"}))  # as every live page does
    await drain(comm)
    run = await start({**BIG_EXPENSE, "amount": 20})
    html = await drain(comm)
    assert f'<tbody hx-swap-oob="afterbegin:#runs-body">\n<tr id="run-row-{run}"' in html
    assert f'<tr id="run-row-{run}" hx-swap-oob="true">' in html
    assert '<span class="status completed">' in html
    await comm.disconnect()


async def test_oversized_frames_are_ignored(olga: User) -> None:
    comm = await socket("/ws/nav/", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data='{"type": "hello", "pad": "' + "x" * 5000 + '"}')
    assert await comm.receive_nothing(timeout=0.3)
    await comm.disconnect()


async def test_a_long_backlog_arrives_whole_in_batches(olga: User, monkeypatch: pytest.MonkeyPatch) -> None:
    from wfapp.web import queries

    monkeypatch.setattr(queries, "LIVE_BATCH", 4)
    monkeypatch.setattr(queries.events_after, "__defaults__", (4,))
    run = await start()
    last = (await Session.objects.aget(pk=run)).last_seq
    comm = await socket(f"/ws/runs/{run}/?after=0", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    assert seqs(await drain(comm)) == list(range(1, last + 1))
    await comm.disconnect()


async def test_inbox_total_follows_answers_live(olga: User) -> None:
    comm = await socket("/ws/inbox/?workflow=expense_approval", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0, "rendered_at": "x"}))
    await drain(comm)
    run = await start()
    assert 'id="inbox-total" hx-swap-oob="true">2 pending matching</p>' in await drain(comm)
    rows = [r async for r in Interrupt.objects.filter(session_id=run).order_by("pk")]
    await answering.answer_interrupt(
        run, rows[0].interrupt_id, {"approved": False, "comment": "no receipt"}, user=olga, advance=False
    )
    html = await drain(comm)
    assert 'id="inbox-total" hx-swap-oob="true">1 pending matching</p>' in html
    assert "Rejected · Comment: no receipt" in html
    await comm.disconnect()


async def test_a_run_page_in_two_groups_acts_on_each_doorbell_once(olga: User) -> None:
    run = await start()
    comm = await socket(f"/ws/runs/{run}/?after=0", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    await drain(comm)
    # An answer rings the run's group and the inbox's: the page hears it twice, acts once.
    await answering.answer_interrupt(run, "manager-approval", {"approved": True}, user=olga, advance=False)
    frames = []
    while not await comm.receive_nothing(timeout=QUIET):
        frames.append(await comm.receive_from())
    assert sum('id="inbox-count"' in frame for frame in frames) == 1
    assert "Answered by olga" in "".join(frames)
    await comm.disconnect()
