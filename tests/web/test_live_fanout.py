"""An inbox update is rendered once per view and doorbell, however many sockets show that view."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.test.signals import template_rendered
from django.utils import timezone

from engine import Runner
from tests.web.conftest import make_user
from tests.web.test_consumers import drain, olga, socket, start
from wfapp.human import claims
from wfapp.models import Interrupt, WorkflowAccess
from wfapp.registry import get_workflow
from wfapp.runs import answering, starting
from wfapp.store.events import DjangoEventStore
from wfapp.web import queries

__all__ = ["olga"]  # the fixture


@pytest.fixture
def renders() -> Iterator[list[str]]:
    """The inbox updates rendered meanwhile (in any thread)."""
    names: list[str] = []

    def rendered(sender: Any, template: Any, **kwargs: Any) -> None:
        if template.name == "inbox_update":  # the partial wfapp/live.html#inbox_update
            names.append(template.name)

    template_rendered.connect(rendered)
    yield names
    template_rendered.disconnect(rendered)


async def _open(user: User, watermark: int, rendered_at: str) -> WebsocketCommunicator:
    comm = await socket("/ws/inbox/", user)
    assert (await comm.connect())[0]
    await comm.send_to(
        text_data=json.dumps({"type": "hello", "watermark": watermark, "rendered_at": rendered_at})
    )
    return comm


async def _renders_for_an_answer(
    run: str, user: User, sockets: list[WebsocketCommunicator], renders: list[str]
) -> int:
    before = len(renders)
    await answering.answer_interrupt(run, "manager-approval", {"approved": True}, user=user, advance=False)
    card = (await Interrupt.objects.aget(session_id=run, interrupt_id="manager-approval")).pk
    for comm in sockets:  # every page hears it and closes the card
        assert f'inbox-item answered" id="interrupt-{card}"' in await comm.receive_from(timeout=10)
    return len(renders) - before


async def test_renders_per_answer_do_not_grow_with_the_sockets_showing_the_same_view(
    olga: User, renders: list[str]
) -> None:
    first, second = await start(), await start()
    watermark = await sync_to_async(queries.interrupt_watermark)()
    rendered_at = timezone.now().isoformat()
    one = [await _open(olga, watermark, rendered_at)]
    await one[0].receive_from(timeout=10)  # the hello's counts
    alone = await _renders_for_an_answer(first, olga, one, renders)

    four = one + [await _open(olga, watermark, rendered_at) for _ in range(3)]
    for comm in four[1:]:
        await comm.receive_from(timeout=10)  # the hello's: the first answer closed since the render
    together = await _renders_for_an_answer(second, olga, four, renders)
    assert together == alone == 1
    for comm in four:
        await comm.disconnect()


# -- one render per permission scope, not per user ----------------------------------------------

DOCUMENT = "document_review"


async def _start_review() -> str:
    run, _ = await starting.create_run(DOCUMENT, {"title": "Notes", "topic": "tides"})
    await Runner(get_workflow(DOCUMENT), store=DjangoEventStore()).advance(run)
    return run


async def _review(run: str) -> int:
    return (await Interrupt.objects.aget(session_id=run, interrupt_id="review-1")).pk


async def _opened(users: list[User]) -> list[WebsocketCommunicator]:
    watermark = await sync_to_async(queries.interrupt_watermark)()
    rendered_at = timezone.now().isoformat()
    sockets = [await _open(user, watermark, rendered_at) for user in users]
    for comm in sockets:
        await comm.receive_from(timeout=10)  # the hello's counts
    return sockets


async def _until(comm: WebsocketCommunicator, text: str) -> str:
    """The frames up to the first one holding ``text`` (all of them, in case others came first)."""
    seen = ""
    while text not in seen:
        seen += await comm.receive_from(timeout=10)
    return seen


@pytest.fixture
async def team(transactional_db: None) -> list[User]:
    """Three operators with the same rights: one permission scope."""
    return [await sync_to_async(make_user)(name, may_answer=True) for name in ("olga", "piet", "quinn")]


async def test_operators_with_the_same_rights_share_one_render_per_answer(
    team: list[User], renders: list[str]
) -> None:
    sockets = await _opened(team)
    run = await _start_review()
    pk = await _review(run)
    for comm in sockets:  # the new question reaches every page
        await _until(comm, f'id="interrupt-{pk}"')
    before = len(renders)
    await answering.answer_interrupt(run, "review-1", {"approved": True}, user=team[0], advance=False)
    for comm in sockets:
        await _until(comm, f'inbox-item answered" id="interrupt-{pk}"')
    assert len(renders) - before == 1  # one render for three users, not one each
    for comm in sockets:
        await comm.disconnect()


def _writers() -> list[User]:
    """Wanda and Walt may answer document reviews through a rule (one scope); Olga holds the
    global answer permission but no rule gives her document reviews (another scope)."""
    writers = Group.objects.create(name="writers")
    WorkflowAccess.objects.create(
        workflow=DOCUMENT, group=writers, may_start=True, may_answer=True, may_view=True
    )
    people = [make_user("wanda", may_answer=False), make_user("walt", may_answer=False)]
    for person in people:
        person.groups.add(writers)
    olga = make_user("olga", may_answer=True)
    return [User.objects.get(pk=p.pk) for p in people] + [olga]


async def test_users_of_different_scopes_never_see_each_others_questions(
    transactional_db: None, renders: list[str]
) -> None:
    wanda, walt, olga = await sync_to_async(_writers)()
    writers, outsider = await _opened([wanda, walt]), (await _opened([olga]))[0]
    run = await _start_review()
    pk = await _review(run)
    for comm in writers:
        assert "Review round 1" in await _until(comm, f'id="interrupt-{pk}"')
    heard = await drain(outsider)  # what the run's start brought Olga's page
    before = len(renders)
    await answering.answer_interrupt(run, "review-1", {"approved": True}, user=wanda, advance=False)
    for comm in writers:
        await _until(comm, f'inbox-item answered" id="interrupt-{pk}"')
    heard += await outsider.receive_from(timeout=10)  # Olga's page's update for the answer: its counts
    assert len(renders) - before == 2  # one per scope: Wanda's and Walt's pages share theirs
    heard += await drain(outsider)
    assert f"interrupt-{pk}" not in heard and "Review round" not in heard  # nothing of it reaches Olga
    for comm in [*writers, outsider]:
        await comm.disconnect()


async def test_a_claimed_question_reads_as_its_holders_only_to_them(
    team: list[User], renders: list[str]
) -> None:
    olga, piet, _ = team
    sockets = await _opened([olga, piet])
    run = await _start_review()
    pk = await _review(run)
    for comm in sockets:
        await _until(comm, f'id="interrupt-{pk}"')
    await claims.claim_interrupt(run, "review-1", user=olga)
    mine = await _until(sockets[0], "You hold this")
    theirs = await _until(sockets[1], "Claimed by <strong>olga</strong>")
    assert f'id="interrupt-{pk}-human"' in mine and "Release" in mine
    assert "You hold this" not in theirs and "Release" not in theirs
    for comm in sockets:
        await comm.disconnect()


async def test_the_requester_of_a_run_alone_reads_that_they_may_not_approve_it(
    team: list[User], renders: list[str]
) -> None:
    """Four-eyes by default: an approval question is not for the run's requester. Operators of
    one scope share renders, but the requester's card reads differently from everyone else's."""
    olga, piet, quinn = team
    sockets = await _opened([olga, piet, quinn])
    run, _ = await starting.create_run(DOCUMENT, {"title": "Notes", "topic": "tides"}, user=piet)
    await Runner(get_workflow(DOCUMENT), store=DjangoEventStore()).advance(run)
    pk = await _review(run)
    seen = [await _until(comm, f'id="interrupt-{pk}"') for comm in sockets]
    refusal = "You started this run, so someone else approves it."
    assert refusal in seen[1] and 'name="f.approved"' not in seen[1]
    for other in (seen[0], seen[2]):
        assert refusal not in other and 'name="f.approved"' in other
    for comm in sockets:
        await comm.disconnect()
