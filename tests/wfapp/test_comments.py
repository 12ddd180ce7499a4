"""Comments: events in the run's log, in order, in the timeline and `wf show`; they change nothing."""

from __future__ import annotations

import asyncio
import json
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from engine import replay_check
from tests.wfapp.flows import count
from tests.wfapp.helpers import settled
from wfapp.errors import BadRequest, NotPermitted, UnknownRunError
from wfapp.human.comments import add_comment
from wfapp.models import Event, Interrupt, Session
from wfapp.registry import get_workflow
from wfapp.runs import answering, starting
from wfapp.runs.reports import run_report
from wfapp.store import lease
from wfapp.store.events import DjangoEventStore
from wfapp.web import presenter


async def _events(session_id: str) -> list[tuple[str, str]]:
    rows = Event.objects.filter(session_id=session_id).order_by("seq").values_list("kind", "author")
    return await sync_to_async(list)(rows)


async def test_a_comment_on_a_waiting_run_changes_nothing(
    engine_runtime: Any, alice: User, bob: User
) -> None:
    session_id = await starting.start_run("approval", {"n": 1}, user=bob)  # alice answers: not her own
    await settled(session_id, "waiting")
    question = await Interrupt.objects.aget(session_id=session_id)
    before = await Session.objects.aget(pk=session_id)
    await add_comment(session_id, "Checking the receipt first", user=alice)
    await add_comment(session_id, "Receipt fine", user=alice, interrupt_pk=question.pk)
    after = await Session.objects.aget(pk=session_id)
    assert after.last_seq == before.last_seq + 2 and after.status == "waiting"
    assert session_id not in await sync_to_async(lease.runs_needing_work)()  # nothing to wake up
    await answering.answer_interrupt(session_id, "ok", {"approved": True}, user=alice)
    await settled(session_id, "completed")
    assert count("approval.finish") == 1
    kinds = [kind for kind, _ in await _events(session_id)]
    assert kinds.index("comment") < kinds.index("answer")
    recorded = (
        await DjangoEventStore().get_session(session_id),
        await DjangoEventStore().list_events(session_id),
    )
    assert replay_check(get_workflow("approval"), recorded[1]).replays


async def test_comments_show_in_the_timeline_and_the_report(engine_runtime: Any, alice: User) -> None:
    session_id = await starting.start_run("approval", {"n": 2}, user=alice)
    await settled(session_id, "waiting")
    question = await Interrupt.objects.aget(session_id=session_id)
    await add_comment(session_id, "first", user=alice)
    await add_comment(session_id, "second, about the question", user=alice, interrupt_pk=question.pk)
    report = await sync_to_async(run_report)(session_id)  # what `wf show` prints
    assert [(c["by"], c["text"], c["question"]) for c in report["comments"]] == [
        ("alice", "first", None),
        ("alice", "second, about the question", "ok"),
    ]
    session = await Session.objects.aget(pk=session_id)
    context = await sync_to_async(presenter.run_context)(session, alice)
    titles = [(e.title, e.detail) for e in context["entries"] if e.kind == "comment"]
    assert titles == [
        ("Comment by alice", "first"),
        ("Comment by alice on question ok", "second, about the question"),
    ]


async def test_a_comment_while_a_turn_runs_is_folded_in(
    engine_runtime: Any, alice: User, test_dir: Any
) -> None:
    session_id = await starting.start_run("blocking", {"n": 3}, user=alice)
    for _ in range(200):
        if count("blocking.wait"):
            break
        await asyncio.sleep(0.05)
    await add_comment(session_id, "still waiting on the file", user=alice)
    (test_dir / "release").write_text("go")
    done = await settled(session_id, "completed")
    assert done.output == {"done": {"n": 3}}
    assert count("blocking.first") == 1 and count("blocking.last") == 1
    assert count("blocking.wait") == 1  # the turn took the comment in: nothing ran again
    assert ("comment", "alice") in await _events(session_id)


async def test_bad_comments_append_nothing(engine_runtime: Any, alice: User, mallory: User) -> None:
    session_id = await starting.start_run("approval", {"n": 4}, user=alice)
    await settled(session_id, "waiting")
    other = await starting.start_run("approval", {"n": 5}, user=alice)
    await settled(other, "waiting")
    foreign = await Interrupt.objects.aget(session_id=other)
    last = (await Session.objects.aget(pk=session_id)).last_seq
    for text, error in (("", "needs some text"), ("   ", "needs some text"), ("x" * 5001, "at most 5000")):
        with pytest.raises(BadRequest, match=error):
            await add_comment(session_id, text, user=alice)
    with pytest.raises(BadRequest, match="has no question"):
        await add_comment(session_id, "wrong run", user=alice, interrupt_pk=foreign.pk)
    with pytest.raises(NotPermitted):
        await add_comment(session_id, "not mine to say", user=mallory)
    with pytest.raises(UnknownRunError):
        await add_comment("no-such-run", "hello", user=alice)
    assert (await Session.objects.aget(pk=session_id)).last_seq == last


def test_the_cli_and_the_page_comment(
    transactional_db: None, workflows: None, alice: User, mallory: User
) -> None:
    from django.test import Client

    async def start() -> str:
        from engine import Runner

        session_id, _ = await starting.create_run("approval", {"n": 6}, user=alice)
        await Runner(get_workflow("approval"), store=DjangoEventStore()).advance(session_id)
        return session_id

    session_id = async_to_sync(start)()
    out = StringIO()
    call_command("wf", "comment", session_id, "--text", "from the shell", "--user", "alice", stdout=out)
    assert json.loads(out.getvalue())["comments"][0]["text"] == "from the shell"
    with pytest.raises(CommandError, match="needs some text"):
        call_command("wf", "comment", session_id, "--text", " ", "--user", "alice")
    client = Client()
    client.force_login(alice)
    assert client.post(f"/runs/{session_id}/comment/", {"text": "from the page"}).status_code == 302
    page = client.get(f"/runs/{session_id}/").content.decode()
    assert "from the page" in page and "from the shell" in page and 'id="comment-text"' in page
    assert client.post(f"/runs/{session_id}/comment/", {"text": ""}).status_code == 400
    client.force_login(mallory)
    assert client.post(f"/runs/{session_id}/comment/", {"text": "sneaky"}).status_code == 403
    assert 'id="comment-text"' not in client.get(f"/runs/{session_id}/").content.decode()
    texts = [
        c
        for c in Event.objects.filter(session_id=session_id, kind="comment").values_list(
            "data__message", flat=True
        )
    ]
    assert texts == ["from the shell", "from the page"]
