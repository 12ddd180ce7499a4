"""A run page closes every question card it shows once it stops pending, whatever closed it."""

from __future__ import annotations

import json
import time

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.contrib.auth.models import User

from tests.web.test_consumers import drain, olga, socket, start  # noqa: F401  (olga is a fixture)
from wfapp.models import Event, Interrupt, InterruptStatus, Session
from wfapp.store.doorbell import DOORBELL_TYPE, session_group


def _close_behind_the_page(run: str, interrupt_id: str, status: str) -> tuple[int, int]:
    """Close one question the way the store does when an execution ends, with one new event."""
    row = Interrupt.objects.get(session_id=run, interrupt_id=interrupt_id)
    Interrupt.objects.filter(pk=row.pk).update(status=status)
    session = Session.objects.get(pk=run)
    seq = session.last_seq + 1
    Event.objects.create(
        session=session, seq=seq, kind="completed", node_path=row.node_path, author="x", timestamp=time.time()
    )
    Session.objects.filter(pk=run).update(last_seq=seq)
    return row.pk, seq


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (InterruptStatus.WITHDRAWN, "No longer needed: the step that asked it ended without it."),
        (InterruptStatus.SUPERSEDED, "No longer needed: the question was asked again."),
    ],
)
async def test_a_card_the_page_shows_closes_when_withdrawn(olga: User, status: str, reason: str) -> None:  # noqa: F811
    run = await start()
    rows = [r async for r in Interrupt.objects.filter(session_id=run).order_by("pk")]
    last = (await Session.objects.aget(pk=run)).last_seq
    comm = await socket(f"/ws/runs/{run}/?after={last}", olga)
    assert (await comm.connect())[0]
    hello = {"type": "hello", "last_seq": last, "open": [r.pk for r in rows]}
    await comm.send_to(text_data=json.dumps(hello))
    await drain(comm)

    pk, seq = await sync_to_async(_close_behind_the_page)(run, "manager-approval", status)
    await get_channel_layer().group_send(
        session_group(run), {"type": DOORBELL_TYPE, "session_id": run, "seq": seq}
    )
    html = await drain(comm, until=f'id="interrupt-{pk}"')  # a loaded machine may take over QUIET
    assert f'class="card inbox-item answered" id="interrupt-{pk}" hx-swap-oob="true"' in html
    assert reason in html
    other = next(r.pk for r in rows if r.pk != pk)
    assert f'id="interrupt-{other}"' not in html  # still pending: left alone
    await comm.disconnect()


async def test_a_run_page_unfolds_a_wide_fanout_and_keeps_it_unfolded_live(olga: User) -> None:  # noqa: F811
    from engine import Runner
    from wfapp.registry import get_workflow
    from wfapp.runs import answering, starting
    from wfapp.store.events import DjangoEventStore

    items = [{"sku": f"S{i}", "price": i, "flagged": True} for i in range(10)]
    run, _ = await starting.create_run("batch_review", {"items": items}, user=olga)
    await Runner(get_workflow("batch_review"), store=DjangoEventStore()).advance(run)
    comm = await socket(f"/ws/runs/{run}/?after=0", olga)
    assert (await comm.connect())[0]
    await comm.send_to(text_data=json.dumps({"type": "hello", "last_seq": 0}))
    html = await comm.receive_from(timeout=10) + await drain(comm)  # a busy machine renders slowly
    assert "+2 more" in html and html.count('class="child ') == 8

    await comm.send_to(text_data=json.dumps({"type": "graph", "expand": ["review_item"]}))
    html = await drain(comm, until='id="run-graph"')  # a loaded machine may take over QUIET
    assert html.lstrip().startswith('<div class="graph-box" id="run-graph" hx-swap-oob="true"')
    assert "Show fewer" in html and html.count('class="child ') == 10

    # A later update re-draws the graph the way the page asked for it.
    row = await Interrupt.objects.filter(session_id=run).order_by("pk").afirst()
    assert row is not None
    await answering.answer_interrupt(run, row.interrupt_id, {"approve": True}, user=olga, advance=False)
    await Runner(get_workflow("batch_review"), store=DjangoEventStore()).advance(run)
    html = await drain(comm, until='id="run-graph" hx-swap-oob="true"')
    graphs = html.count('id="run-graph" hx-swap-oob="true"')
    assert graphs and html.count('class="child ') == 10 * graphs
    assert html.count("Show fewer") == graphs and "more</text>" not in html
    await comm.disconnect()
