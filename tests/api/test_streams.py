"""SSE: a run's events in order with resume by ``Last-Event-ID``; the inbox's changes; revocation."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from engine import Runner
from tests.api.conftest import EXPENSE, Api, request_thread
from tests.api.sse import Reader
from wfapp.api import tokens
from wfapp.models import ApiToken, Event
from wfapp.registry import get_workflow
from wfapp.runs import answering, starting
from wfapp.store.events import DjangoEventStore


async def _stream(api: Api, path: str, **headers: str) -> Reader:
    async with request_thread():
        return Reader(await api.get(path, **headers))


async def _seqs(session_id: str) -> list[int]:
    return [
        seq
        async for seq in Event.objects.filter(session_id=session_id)
        .order_by("seq")
        .values_list("seq", flat=True)
    ]


async def test_resume_after_a_disconnect_gets_every_missed_event_once_in_order(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run = await waiting_run(by="rhea")
    first = await _stream(as_alice, f"runs/{run['id']}/stream")
    seen = [await first.next() for _ in range(run["last_seq"])]
    assert [f.id for f in seen] == list(range(1, run["last_seq"] + 1))
    assert [f.data["seq"] for f in seen] == [f.id for f in seen] and seen[0].data["timestamp"].endswith("Z")
    await first.close()  # the client goes away

    manager, finance = run["pending"]
    await as_alice.post(f"interrupts/{manager['id']}/answer", {"answer": {"approved": True}})
    resumed = await _stream(as_alice, f"runs/{run['id']}/stream", **{"Last-Event-ID": str(seen[-1].id)})
    live = [await resumed.next() for _ in range(4)]  # what it missed while away
    await as_alice.post(f"interrupts/{finance['id']}/answer", {"answer": {"approved": False}})
    rest = await resumed.until("end")
    got = [f.id for f in live + rest if f.event == "message"]
    assert got == (await _seqs(run["id"]))[len(seen) :]
    assert rest[-1].data == {"run": run["id"], "status": "completed", "last_seq": got[-1]}
    assert next(f.data["kind"] for f in live + rest if f.event == "message") == "answer"

    again = await _stream(as_alice, f"runs/{run['id']}/stream?after=3")
    replay = await again.until("end")
    assert [f.id for f in replay if f.event == "message"] == list(range(4, got[-1] + 1))


async def test_a_bad_last_event_id_is_refused(waiting_run: Callable[..., Any], as_alice: Api) -> None:
    run = await waiting_run(by="rhea")
    refused = await as_alice.get(f"runs/{run['id']}/stream", **{"Last-Event-ID": "seven"})
    assert refused.status_code == 400 and refused.json()["type"] == "/api/v1/problems/bad-request"


async def test_the_inbox_stream_shows_new_and_closed_questions_you_may_answer(
    waiting_run: Callable[..., Any], as_alice: Api, as_bob: Api, as_mallory: Api
) -> None:
    run = await waiting_run(by="rhea")
    inbox = await _stream(as_bob, "interrupts/stream?workflow=expense_approval")
    opening = await inbox.until("ready")
    assert [f.data["id"] for f in opening if f.event == "pending"] == [q["id"] for q in run["pending"]]
    assert opening[-1].data == {"pending": 2}
    blind = await _stream(as_mallory, "interrupts/stream")
    assert [f.event for f in await blind.until("ready")] == ["ready"]

    await as_alice.post(f"interrupts/{run['pending'][0]['id']}/answer", {"answer": {"approved": True}})
    closed = await inbox.next()
    assert closed.event == "closed" and closed.data["id"] == run["pending"][0]["id"]
    assert closed.data["status"] == "answered" and closed.data["answered_by"] == "alice"

    other = await as_alice.post("workflows/expense_approval/runs", {"input": {**EXPENSE, "amount": 500}})
    asked = await inbox.next()
    assert asked.event == "pending" and asked.data["run"] == other.json()["id"]
    assert asked.data["interrupt_id"] == "manager-approval"
    await inbox.close()
    await blind.close()


async def test_a_token_revoked_mid_session_ends_its_stream_and_its_requests(
    waiting_run: Callable[..., Any], as_alice: Api, bob: User
) -> None:
    run = await waiting_run(by="rhea")
    token = await sync_to_async(lambda: tokens.issue(bob, "chat bot")[1])()
    as_bob = Api(token)
    assert (await as_bob.get(f"runs/{run['id']}")).status_code == 200
    stream = await _stream(as_bob, f"runs/{run['id']}/stream")
    for _ in range(run["last_seq"]):
        await stream.next()
    record = await ApiToken.objects.aget(user=bob)
    assert record.last_used_at is not None and record.digest != token and token not in record.prefix + "…"
    assert await sync_to_async(tokens.revoke)(bob, record.pk)

    await as_alice.post(f"interrupts/{run['pending'][0]['id']}/answer", {"answer": {"approved": True}})
    ending = await stream.until("error")
    assert ending[-1].data["type"] == "/api/v1/problems/invalid-token"
    refused = await as_bob.get(f"runs/{run['id']}")
    assert refused.status_code == 401 and refused.json()["type"] == "/api/v1/problems/invalid-token"


async def test_an_inbox_stream_resumed_after_a_disconnect_gets_every_missed_change_once_in_order(
    waiting_run: Callable[..., Any], as_alice: Api, as_bob: Api
) -> None:
    first = await waiting_run(by="rhea")
    manager, finance = first["pending"]
    inbox = await _stream(as_bob, "interrupts/stream?workflow=expense_approval")
    opening = await inbox.until("ready")
    assert [(f.event, f.data["id"]) for f in opening[:-1]] == [
        ("pending", manager["id"]),
        ("pending", finance["id"]),
    ]
    listed_at = opening[-1].id
    assert listed_at is not None and opening[-1].data == {"pending": 2}
    await as_alice.post(f"interrupts/{manager['id']}/answer", {"answer": {"approved": True}})
    closed = await inbox.next()
    assert (closed.event, closed.data["id"]) == ("closed", manager["id"])
    assert closed.id is not None and closed.id != listed_at
    await inbox.close()  # the client goes away; meanwhile:

    await as_alice.post(f"interrupts/{finance['id']}/answer", {"answer": {"approved": False}})
    second = await waiting_run(by="rhea", node_input={**EXPENSE, "amount": 500})  # the manager only
    third = await waiting_run(by="rhea")
    assert (await as_alice.post(f"runs/{third['id']}/cancel")).status_code == 200

    resumed = await _stream(
        as_bob, "interrupts/stream?workflow=expense_approval", **{"Last-Event-ID": str(closed.id)}
    )
    missed = await resumed.until("ready")
    changes = [(f.event, f.data["id"]) for f in missed[:-1]]
    [second_manager] = second["pending"]
    third_asked = {q["id"] for q in third["pending"]}
    assert changes[:2] == [("closed", finance["id"]), ("pending", second_manager["id"])]
    assert {c for c in changes[2:] if c[0] == "pending"} == {("pending", pk) for pk in third_asked}
    assert changes[-2:] == sorted(("closed", pk) for pk in third_asked)
    assert len(changes) == 6 and missed[-1].data == {"pending": 1}
    ids = [f.id for f in missed]
    # One entry (the cancel) closed both of the third run's questions: only the last says it.
    assert ids[-3] is None and None not in ids[:2] + ids[-2:]
    given = [i for i in ids[:-1] if i is not None]
    assert len(set(given)) == len(given) and ids[-1] == ids[-2]  # `ready`: where the last change left it
    assert [f.data["status"] for f in missed[:-1] if f.event == "closed"] == [
        "answered",
        "cancelled",
        "cancelled",
    ]

    # Live again: the next change follows; a resume from the list's position gets only it.
    await as_alice.post(f"interrupts/{second_manager['id']}/answer", {"answer": {"approved": True}})
    after = await resumed.next()
    assert (after.event, after.data["id"]) == ("closed", second_manager["id"]) and after.id != missed[-1].id
    await resumed.close()
    again = await _stream(as_bob, f"interrupts/stream?workflow=expense_approval&after={missed[-1].id}")
    replay = await again.until("ready")
    assert [f.event for f in replay] == ["closed", "ready"]  # (a position says what was read when)
    assert replay[0].data["id"] == second_manager["id"] and replay[-1].data == {"pending": 0}
    assert replay[-1].event == "ready" and replay[-1].id is not None
    await again.close()
    refused = await as_bob.get("interrupts/stream", **{"Last-Event-ID": "latest"})
    assert refused.status_code == 400 and refused.json()["type"] == "/api/v1/problems/bad-request"


async def test_a_models_text_streams_as_text_frames_then_the_recorded_step(
    settings: Any, alice: User, as_alice: Api, tmp_path: Path
) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:streaming"]
    run, _ = await starting.create_run("web_streaming", {"gates": str(tmp_path)}, user=alice)
    await Runner(get_workflow("web_streaming"), store=DjangoEventStore()).advance(run)
    await answering.answer_interrupt(run, "go", True, user=alice, advance=False)
    stream = await _stream(as_alice, f"runs/{run}/stream")
    before = await _seqs(run)
    assert [(await stream.next()).id for _ in before] == before
    driving = asyncio.ensure_future(
        Runner(get_workflow("web_streaming"), store=DjangoEventStore(own_thread=True)).advance(run)
    )
    texts = []
    for number in range(3):
        (tmp_path / str(number)).touch()  # let the scripted model say its next piece
        frames = await stream.until("text")
        texts.append(frames[-1])
    assert [(f.data["offset"], f.data["text"], f.id) for f in texts] == [
        (0, "Once ", None),
        (5, "upon ", None),
        (10, "a <time>.", None),
    ]
    assert texts[0].data["node_path"].startswith("web_streaming@1/narrator@1/")
    assert (await driving).output == "Once upon a <time>."
    rest = await stream.until("end")
    step = next(f for f in rest if f.event == "message" and "Once upon a <time>." in json.dumps(f.data))
    assert isinstance(step.id, int)  # the recorded step, with the whole answer, has its seq
    assert not any(f.event == "text" for f in rest[rest.index(step) :])
    await stream.close()


async def _accepted(api: Api, path: str) -> Reader:
    """The stream at ``path`` once the server accepts it (a closed stream's slot is freed when
    the server's side of it ends)."""
    async with asyncio.timeout(10):
        while True:
            gc.collect()
            async with request_thread():
                response = await api.get(path)
            if response.status_code != 429:
                return Reader(response)
            await asyncio.sleep(0.05)


async def test_one_user_holds_at_most_the_streams_allowed(
    waiting_run: Callable[..., Any], as_bob: Api, as_alice: Api, settings: Any
) -> None:
    settings.WFAPP_MAX_STREAMS_PER_USER = 2
    run = await waiting_run(by="rhea")
    first = await _stream(as_bob, "interrupts/stream")
    second = await _stream(as_bob, f"runs/{run['id']}/stream")
    await first.until("ready")
    async with request_thread():
        refused = await as_bob.get("interrupts/stream")
    assert refused.status_code == 429 and refused.json()["type"] == "/api/v1/problems/too-many-streams"
    other = await _stream(as_alice, "interrupts/stream")  # another user's own allowance
    await other.until("ready")
    await first.close()
    del first  # the client is gone: its stream gives its place back
    again = await _accepted(as_bob, "interrupts/stream")
    await again.until("ready")
    for stream in (second, other, again):
        await stream.close()


async def test_an_inbox_stream_from_the_beginning_reads_the_log_page_by_page(
    waiting_run: Callable[..., Any], as_bob: Api, monkeypatch: Any
) -> None:
    from wfapp.api import inbox_positions

    runs = [await waiting_run(by="rhea") for _ in range(2)]
    asked = [q["id"] for run in runs for q in run["pending"]]
    monkeypatch.setattr(inbox_positions, "PAGE", 2)  # pages smaller than the log: many pages
    stream = await _stream(as_bob, "interrupts/stream?after=0")
    frames = await stream.until("ready")
    assert [(f.event, f.data["id"]) for f in frames[:-1]] == [("pending", pk) for pk in asked]
    given = [f.id for f in frames[:-1] if f.id is not None]
    assert len(set(given)) == len(given)  # each change its own position, in order
    await stream.close()
