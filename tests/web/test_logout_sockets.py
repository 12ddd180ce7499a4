"""Logging out closes the open sockets of that login session: the tab gets no more live questions."""

from __future__ import annotations

import json

from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client

from tests.web.test_consumers import ORIGIN, drain, olga, start
from wfapp.asgi import application
from wfapp.web.live.logout import LOGGED_OUT

__all__ = ["olga"]  # the fixture


async def _logged_in(user: User) -> Client:
    client = Client()
    await sync_to_async(client.force_login)(user)
    return client


async def _inbox(client: Client) -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    comm = WebsocketCommunicator(application, "/ws/inbox/", headers=[ORIGIN, (b"cookie", cookie)])
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0}))
    await drain(comm)
    return comm


async def test_logging_out_closes_that_sessions_sockets_and_no_question_follows(olga: User) -> None:
    leaving, staying = await _logged_in(olga), await _logged_in(olga)  # two browsers, one user
    tabs = [await _inbox(leaving), await _inbox(leaving)]
    other = await _inbox(staying)

    response = await sync_to_async(leaving.post)("/logout/")
    assert response.status_code == 302

    for tab in tabs:
        closed = await tab.receive_output(timeout=5)
        assert closed == {"type": "websocket.close", "code": LOGGED_OUT}
    await start()  # asks two new questions
    for tab in tabs:
        assert await tab.receive_nothing(timeout=0.5)
    assert 'class="card inbox-item"' in await drain(other)  # the other session is still live
    await other.disconnect()
