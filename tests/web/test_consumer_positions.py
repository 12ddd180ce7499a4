"""Live updates arrive once and in order, even when a doorbell beats the page's hello.

A page is rendered at some position (a run page at a seq, the inbox at a watermark), its socket
opens, and only then does it say hello with that position. A commit in between rings the
socket before the hello: it must not be answered from the socket URL's stale position, and a
hello with an older position must not move the socket back.
"""

from __future__ import annotations

import json
import re
from typing import Any

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.utils import timezone

from tests.web.test_consumers import drain, olga, seqs, socket, start
from wfapp.models import Interrupt, Session
from wfapp.runs import answering
from wfapp.web import queries

__all__ = ["olga"]  # the fixture


async def hello(comm: WebsocketCommunicator, **position: object) -> str:
    await comm.send_to(text_data=json.dumps({"type": "hello", **position}))
    return await drain(comm)


def new_cards(html: str) -> list[int]:
    return [int(pk) for pk in re.findall(r'class="card inbox-item" id="interrupt-(\d+)"', html)]


async def test_a_run_page_gets_each_event_once_in_order_when_a_doorbell_beats_its_hello(olga: User) -> None:
    run = await start()
    rendered = (await Session.objects.aget(pk=run)).last_seq  # the page shows up to here
    comm = await socket(f"/ws/runs/{run}/?after={rendered}", olga)
    assert (await comm.connect())[0]
    # The manager answers between the page's render and its hello: the socket hears the doorbell first.
    await answering.answer_interrupt(run, "manager-approval", {"approved": True}, user=olga, advance=False)
    sent = await drain(comm)
    sent += await hello(comm, last_seq=rendered)
    sent += await hello(comm, last_seq=0)  # an older position changes nothing
    await answering.answer_interrupt(run, "finance-approval", {"approved": True}, user=olga, advance=False)
    sent += await drain(comm)
    last = (await Session.objects.aget(pk=run)).last_seq
    assert last == rendered + 2
    assert seqs(sent) == [rendered + 1, rendered + 2]  # each once, in order
    await comm.disconnect()


async def test_an_inbox_shows_each_question_once_when_a_doorbell_beats_its_hello(olga: User) -> None:
    run = await start()  # asks the manager and finance
    rows = [row async for row in Interrupt.objects.filter(session_id=run).order_by("pk")]
    assert len(rows) == 2
    # The inbox page is rendered with both cards; its socket URL carries only the filters.
    watermark = await sync_to_async(queries.interrupt_watermark)()
    rendered_at = timezone.now().isoformat()
    comm = await socket("/ws/inbox/", olga)
    assert (await comm.connect())[0]
    await answering.answer_interrupt(run, rows[0].interrupt_id, {"approved": True}, user=olga, advance=False)
    sent = await drain(comm)
    sent += await hello(comm, watermark=watermark, rendered_at=rendered_at)
    sent += await hello(comm, watermark=0, rendered_at=rendered_at)  # older: moves nothing back
    assert new_cards(sent) == []  # the page already shows both: no second card to answer twice
    assert sent.count(f'id="interrupt-{rows[0].pk}" hx-swap-oob="true"') == 1  # closed once
    assert "Answered by olga" in sent

    # A question asked later appears once, however many doorbells and hellos come after.
    second = await start()
    sent = await drain(comm)
    sent += await hello(comm, watermark=watermark, rendered_at=rendered_at)
    fresh = [row.pk async for row in Interrupt.objects.filter(session_id=second).order_by("pk")]
    assert new_cards(sent) == fresh
    await comm.disconnect()


async def test_a_doorbell_before_the_hello_is_ignored_by_every_page(olga: User) -> None:
    paths = ["/ws/nav/", "/ws/runs/", "/ws/inbox/"]
    comms = [await socket(path, olga) for path in paths]
    for comm in comms:
        assert (await comm.connect())[0]
    await start()
    for path, comm in zip(paths, comms, strict=True):
        assert await drain(comm) == "", path  # its hello, still to come, reads all of it
        assert 'id="inbox-count"' in await hello(comm), path
        await comm.disconnect()


async def test_a_long_backlog_arrives_whole_in_messages_the_server_can_send(
    olga: User, settings: Any
) -> None:
    settings.DAPHNE_WEBSOCKET_MAX_MESSAGE_SIZE = 12000  # Daphne refuses to send a larger one (1011)
    run = await start()
    last = (await Session.objects.aget(pk=run)).last_seq
    comm = await socket(f"/ws/runs/{run}/?after=0", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    messages = [await comm.receive_from(timeout=10)]
    while not await comm.receive_nothing(timeout=1):
        messages.append(await comm.receive_from())
    assert len(messages) > 2
    assert max(len(message.encode()) for message in messages) <= 12000
    assert seqs("".join(messages)) == list(range(1, last + 1))  # each once, in order
    await comm.disconnect()
