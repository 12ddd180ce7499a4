"""Live channels close when the access they were opened with ends: the session expires or logs
out, the password changes, the user is deactivated or loses the right (websockets: 4401; SSE:
an error frame, then the end of the stream)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Permission, User
from django.contrib.sessions.models import Session as LoginSession
from django.test import AsyncClient, Client
from django.utils import timezone

from tests.api.conftest import Api, request_thread, token_for
from tests.api.sse import Reader
from tests.web.test_consumers import ORIGIN, drain, olga, start
from wfapp.asgi import application
from wfapp.web.live import access
from wfapp.web.live.logout import LOGGED_OUT

__all__ = ["olga"]  # the fixture
CLOSED = {"type": "websocket.close", "code": LOGGED_OUT}


@pytest.fixture
def quick_checks(settings: Any) -> None:
    settings.WFAPP_LIVE_RECHECK_SECONDS = 0.1  # a quiet channel checks this often (then FRESH caps it)


def _login(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


async def _socket(client: Client, path: str = "/ws/inbox/") -> WebsocketCommunicator:
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    comm = WebsocketCommunicator(application, path, headers=[ORIGIN, (b"cookie", cookie)])
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0}))
    await drain(comm)
    return comm


def _expire(client: Client) -> None:
    key = client.cookies["sessionid"].value
    LoginSession.objects.filter(session_key=key).update(expire_date=timezone.now() - timedelta(seconds=1))


def _new_password(user: User) -> None:
    user.set_password("a-new-Secret-77")
    user.save()


def _deactivate(user: User) -> None:
    user.is_active = False
    user.save()


def _no_answer_permission(user: User) -> None:
    user.user_permissions.remove(Permission.objects.get(codename="answer_interrupt"))


ENDINGS: list[tuple[str, Callable[[Client, User], None]]] = [
    ("expired", lambda client, user: _expire(client)),
    ("password", lambda client, user: _new_password(user)),
    ("deactivated", lambda client, user: _deactivate(user)),
    ("lost the answer permission", lambda client, user: _no_answer_permission(user)),
]


@pytest.mark.parametrize(("why", "end"), ENDINGS, ids=[why for why, _ in ENDINGS])
async def test_a_quiet_inbox_socket_closes_when_its_access_ends(
    olga: User, quick_checks: None, why: str, end: Callable[[Client, User], None]
) -> None:
    client = await sync_to_async(_login)(olga)
    comm = await _socket(client)
    await sync_to_async(end)(client, olga)
    assert await comm.receive_output(timeout=10) == CLOSED, why
    await start()  # new questions: none reaches the closed page
    assert await comm.receive_nothing(timeout=0.5)


async def test_every_delivery_checks_so_a_lost_permission_sends_no_question(
    olga: User, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.WFAPP_LIVE_RECHECK_SECONDS = 3600  # the quiet check never comes during the test
    monkeypatch.setattr(access, "FRESH", 0.0)  # each delivery checks afresh
    monkeypatch.setattr(access, "RIGHT_FRESH", 0.0)
    client, other = await sync_to_async(_login)(olga), await sync_to_async(_login)(olga)
    comm = await _socket(client)
    await sync_to_async(_no_answer_permission)(olga)
    await start()
    closed = await comm.receive_output(timeout=10)
    assert closed == CLOSED, closed  # the question it was about to push is not sent
    assert await comm.receive_nothing(timeout=0.5)
    still = await _socket(other, "/ws/nav/")  # a page that needs no answer permission stays open
    await start()
    assert (await still.receive_output(timeout=10))["type"] == "websocket.send"
    await still.disconnect()


async def test_a_run_socket_closes_when_the_user_may_no_longer_view_the_run(
    olga: User, quick_checks: None
) -> None:
    from django.contrib.auth.models import Group

    from wfapp.models import WorkflowAccess

    run = await start()
    client = await sync_to_async(_login)(olga)
    comm = await _socket(client, f"/ws/runs/{run}/")
    others = await Group.objects.acreate(name="others")
    await WorkflowAccess.objects.acreate(workflow="expense_approval", group=others, may_view=True)
    assert await comm.receive_output(timeout=10) == CLOSED


async def _session_stream(client: Client, path: str) -> tuple[AsyncClient, Reader]:
    browser = AsyncClient()
    browser.cookies = client.cookies
    async with request_thread():
        return browser, Reader(await browser.get("/api/v1/" + path))


async def test_a_session_stream_ends_when_the_session_logs_out(olga: User, quick_checks: None) -> None:
    client = await sync_to_async(_login)(olga)
    _, stream = await _session_stream(client, "interrupts/stream")
    await stream.until("ready")
    assert (await sync_to_async(client.post)("/logout/")).status_code == 302
    ending = await stream.until("error", timeout=10)
    assert ending[-1].data["type"] == "/api/v1/problems/unauthenticated"
    await start()
    with pytest.raises(StopAsyncIteration):
        await stream.next()


async def _ends(stream: Reader, change: Callable[[], Awaitable[Any]]) -> list[Any]:
    await change()
    return await stream.until("error", timeout=10)


async def test_a_token_stream_ends_when_its_user_loses_the_right_or_is_deactivated(
    olga: User, quick_checks: None
) -> None:
    api = Api(await sync_to_async(token_for)(olga))
    async with request_thread():
        inbox = Reader(await api.client.get("/api/v1/interrupts/stream", headers=api.headers))
    await inbox.until("ready")
    ending = await _ends(inbox, sync_to_async(lambda: _no_answer_permission(olga)))
    assert ending[-1].data["type"] == "/api/v1/problems/invalid-token"

    run = await start()
    async with request_thread():
        events = Reader(await api.client.get(f"/api/v1/runs/{run}/stream", headers=api.headers))
    await events.next()
    ending = await _ends(events, sync_to_async(lambda: _deactivate(olga)))
    assert ending[-1].data["type"] == "/api/v1/problems/invalid-token"
