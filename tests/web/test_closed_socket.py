"""A tab that closes while a live update is on its way is normal: logged at debug level, no traceback.

Daphne hands a consumer's send to autobahn, which raises ``Disconnected`` once the client's
close handshake has begun but before Daphne has seen the connection go (a tab closed while its
socket still had an update coming). The socket here behaves exactly so from the moment the
"tab" closes; the consumer must take it in its stride.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from autobahn.exception import Disconnected
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from tests.web.test_consumers import ORIGIN, _cookie, drain, olga, start
from wfapp.asgi import application

__all__ = ["olga"]  # the fixture


class ClosingTab:
    """The ASGI application behind a socket whose client goes away when ``close()`` is called."""

    def __init__(self) -> None:
        self.closed = False

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        async def send_until_closed(message: dict[str, Any]) -> None:
            if self.closed and message["type"] == "websocket.send":
                raise Disconnected("Attempt to send on a closed protocol")  # autobahn's own words
            await send(message)

        return await application(scope, receive, send_until_closed)

    def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("path", ["/ws/nav/", "/ws/inbox/", "/ws/runs/", "run"])
async def test_a_tab_closed_during_a_live_update_is_logged_quietly(
    olga: User, caplog: pytest.LogCaptureFixture, path: str
) -> None:
    run = await start()
    tab = ClosingTab()
    path = f"/ws/runs/{run}/" if path == "run" else path
    headers = [ORIGIN, (b"cookie", await sync_to_async(_cookie)(olga))]
    comm = WebsocketCommunicator(tab, path, headers=headers)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    await drain(comm)
    caplog.set_level(logging.DEBUG, logger="wfapp.web.live.consumers")

    tab.close()
    await start()  # live updates for every page are on their way as the tab goes
    assert await comm.receive_nothing(timeout=0.5)  # the consumer did not fail (that would raise here)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING or r.exc_info]
    assert any("socket closed" in r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    await comm.disconnect()
