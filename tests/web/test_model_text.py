"""A model's text streams into the run page's transcript over the run's socket, never stored."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from engine import Runner
from tests.web.test_consumers import _close_thread_connections, drain, olga, socket  # noqa: F401
from wfapp.models import Event
from wfapp.registry import get_workflow
from wfapp.runs import answering, starting
from wfapp.store.events import DjangoEventStore

LIVE = "transcript-web_streaming-1-narrator-1-live"  # the agent's transcript's live line


@pytest.fixture(autouse=True)
def _registered(settings) -> None:  # type: ignore[no-untyped-def]
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:streaming"]


async def until(comm: WebsocketCommunicator, text: str) -> str:
    """The first frame that contains ``text`` (others, the pending-count badge say, are skipped)."""
    while True:
        frame = await comm.receive_from(timeout=10)
        if text in frame:
            return frame


def append(piece: str) -> str:
    return f'<div hx-swap-oob="beforeend:#{LIVE}">{piece}</div>'


async def page(run: str, user: User) -> WebsocketCommunicator:
    comm = await socket(f"/ws/runs/{run}/?after=0", user)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    return comm


async def test_the_text_streams_into_the_live_line_and_the_log_keeps_only_the_response(
    olga: User,  # noqa: F811 (the fixture imported above)
    tmp_path: Path,
) -> None:
    run, _ = await starting.create_run("web_streaming", {"gates": str(tmp_path)}, user=olga)
    await Runner(get_workflow("web_streaming"), store=DjangoEventStore()).advance(run)
    await answering.answer_interrupt(run, "go", True, user=olga, advance=False)
    comm = await page(run, olga)
    await drain(comm)
    driving = asyncio.ensure_future(
        Runner(get_workflow("web_streaming"), store=DjangoEventStore(own_thread=True)).advance(run)
    )

    await until(comm, f'id="{LIVE}" aria-live="polite"></div>')  # the step started: an empty live line
    for number, piece in enumerate(["Once ", "upon "]):
        (tmp_path / str(number)).touch()
        assert await until(comm, piece) == append(piece)
    late = await page(run, olga)  # a page that opens now missed the start
    await until(late, f'id="{LIVE}" aria-live="polite"></div>')
    (tmp_path / "2").touch()
    assert await until(comm, "&lt;time&gt;") == append("a &lt;time&gt;.")
    assert await until(late, "&lt;time&gt;") == append("…a &lt;time&gt;.")  # "…" for what it missed

    result = await driving
    assert result.status == "completed" and result.output == "Once upon a <time>."
    done = await drain(comm)
    assert "Once upon a &lt;time&gt;." in done and LIVE not in done  # the recorded answer replaces it
    logged = [row async for row in Event.objects.filter(session_id=run).values_list("data", flat=True)]
    assert not any("upon " == str(data) for data in logged)
    assert sum("Once upon" in json.dumps(data) for data in logged) == 2  # the model step and the output
    await comm.disconnect()
    await late.disconnect()
