"""Issue 24, item 1: a decision lands only on the asking its giver saw.

The ``payments`` workflow asks ``interrupt_id="payment"`` for payment #1 of 10, then again for
payment #2 of 99,999. A repeated answer to the first asking (a double click, a client retry, a
stale tab, bulk ids picked before a live update) is refused with 409 and changes nothing; it
never approves payment #2. These run through the API, the pages and the bulk bar.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import AsyncClient

from engine import Event as LogEvent
from engine.errors import AskingChangedError, InterruptAlreadyAnswered, UnknownInterruptError
from engine.events import Answer
from tests.api.conftest import Api, event_kinds, request_thread
from tests.wfapp.helpers import settled
from wfapp.models import AnswerAttempt, Interrupt
from wfapp.store.events import DjangoEventStore

APPROVE = {"answer": {"approved": True}}


async def _second_payment(waiting_run: Callable[..., Any], as_alice: Api) -> tuple[dict[str, Any], int, int]:
    """A run (rhea's) whose payment #1 alice approved, now asking payment #2: (run, first id, second id)."""
    run = await waiting_run("payments", {}, by="rhea")
    first = run["pending"][0]
    assert first["payload"] == {"number": 1, "amount": 10} and first["interrupt_id"] == "payment"
    answered = await as_alice.post(f"interrupts/{first['id']}/answer", {**APPROVE, "digest": first["digest"]})
    assert answered.status_code in (200, 202), answered.content
    await settled(run["id"], "waiting")
    again = (await as_alice.get(f"runs/{run['id']}")).json()
    [second] = again["pending"]
    assert second["payload"] == {"number": 2, "amount": 99_999} and second["interrupt_id"] == "payment"
    assert second["request_seq"] > first["request_seq"] and second["digest"] != first["digest"]
    return again, first["id"], second["id"]


async def _page(user: User) -> AsyncClient:
    client = AsyncClient()
    await client.aforce_login(user)
    return client


async def test_the_api_refuses_a_repeated_answer_to_the_first_asking(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run, first, second = await _second_payment(waiting_run, as_alice)
    before = await event_kinds(run["id"])

    again = await as_alice.post(f"interrupts/{first}/answer", APPROVE)  # a client retry, no digest
    assert again.status_code == 409, again.content
    problem = again.json()
    assert problem["type"] == "/api/v1/problems/already-answered"
    assert problem["answered_by"] == "alice" and problem["answered_at"]
    assert await event_kinds(run["id"]) == before
    assert (await Interrupt.objects.aget(pk=second)).status == "pending"


async def test_the_api_refuses_an_answer_whose_digest_is_not_what_is_asked(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run, first, second = await _second_payment(waiting_run, as_alice)
    shown_first = (await Interrupt.objects.aget(pk=first)).digest
    before = await event_kinds(run["id"])

    refused = await as_alice.post(f"interrupts/{second}/answer", {**APPROVE, "digest": shown_first})
    assert refused.status_code == 409, refused.content
    assert refused.json()["type"] == "/api/v1/problems/asking-closed"
    assert "shows has changed" in refused.json()["detail"]
    assert await event_kinds(run["id"]) == before
    stale = await AnswerAttempt.objects.filter(session_id=run["id"], outcome="stale").aget()
    row = await Interrupt.objects.aget(pk=second)
    assert (stale.request_seq, stale.digest) == (row.request_seq, shown_first)

    fine = await as_alice.post(f"interrupts/{second}/answer", {**APPROVE, "digest": row.digest})
    assert fine.status_code in (200, 202), fine.content
    accepted = await AnswerAttempt.objects.filter(session_id=run["id"], outcome="accepted").alast()
    assert accepted is not None and (accepted.request_seq, accepted.digest) == (row.request_seq, row.digest)


async def test_the_answer_form_of_the_first_asking_is_refused_in_place(
    waiting_run: Callable[..., Any], as_alice: Api, alice: User
) -> None:
    run, first, second = await _second_payment(waiting_run, as_alice)
    before = await event_kinds(run["id"])
    row = await Interrupt.objects.aget(pk=first)
    client = await _page(alice)
    async with request_thread():  # a stale tab sends payment #1's form again
        response = await client.post(
            f"/interrupts/{first}/answer/",
            {"f.approved": "true", "digest": row.digest},
            headers={"HX-Request": "true"},
        )
    assert response.status_code == 409
    page = response.content.decode()
    assert "Already answered by alice" in page and "Pay payment #1 of 10?" in page
    assert response["HX-Retarget"] == f"#interrupt-{first}" and response["HX-Reswap"] == "outerHTML"
    assert await event_kinds(run["id"]) == before
    assert (await Interrupt.objects.aget(pk=second)).status == "pending"


async def test_the_bulk_bar_reports_a_stale_tick_and_answers_nothing_else(
    waiting_run: Callable[..., Any], as_alice: Api, alice: User
) -> None:
    run, first, second = await _second_payment(waiting_run, as_alice)
    before = await event_kinds(run["id"])
    client = await _page(alice)
    async with request_thread():  # ids ticked before the live update
        response = await client.post(
            "/inbox/bulk/", {"ids": [str(first)], "decision": "approve"}, headers={"HX-Request": "true"}
        )
    assert response.status_code == 409
    text = response.content.decode()
    assert "Already answered by alice" in text and "Approved" not in text
    assert await event_kinds(run["id"]) == before
    assert (await Interrupt.objects.aget(pk=second)).status == "pending"


async def test_a_bulk_tick_whose_card_showed_something_else_is_refused(
    waiting_run: Callable[..., Any], as_alice: Api, alice: User
) -> None:
    _, first, second = await _second_payment(waiting_run, as_alice)
    shown_first = (await Interrupt.objects.aget(pk=first)).digest
    client = await _page(alice)
    async with request_thread():
        response = await client.post(
            "/inbox/bulk/",
            {"ids": [f"{second}:{shown_first}"], "decision": "approve"},
            headers={"HX-Request": "true"},
        )
    assert response.status_code == 409
    assert "what it shows has changed" in response.content.decode()
    assert (await Interrupt.objects.aget(pk=second)).status == "pending"


async def test_a_claim_of_a_closed_asking_does_not_claim_the_new_one(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run, first, second = await _second_payment(waiting_run, as_alice)
    before = await event_kinds(run["id"])
    refused = await as_alice.post(f"interrupts/{first}/claim")
    assert refused.status_code == 409, refused.content
    assert refused.json()["type"] == "/api/v1/problems/decision-refused"
    assert await event_kinds(run["id"]) == before
    assert (await Interrupt.objects.aget(pk=second)).claimed_by == ""


async def test_the_store_checks_the_asking_inside_the_append(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    """An answer event naming a closed asking, or other content, is refused by the append itself
    (the engine's check may have read the log before it moved on) and writes nothing."""
    run, first, second = await _second_payment(waiting_run, as_alice)
    closed = await Interrupt.objects.aget(pk=first)
    pending = await Interrupt.objects.aget(pk=second)
    store = DjangoEventStore()
    last = (await store.get_session(run["id"])).last_seq

    def answer(request_seq: int, digest: str | None = None) -> LogEvent:
        given = Answer(
            interrupt_id="payment",
            value={"approved": True},
            actor="alice",
            request_seq=request_seq,
            digest=digest,
        )
        return LogEvent(
            seq=last + 1,
            session_id=run["id"],
            kind="answer",
            author="alice",
            node_path=pending.node_path,
            answer=given,
        )

    with pytest.raises(InterruptAlreadyAnswered) as answered:
        await store.append(run["id"], [answer(closed.request_seq)], expected_seq=last)
    assert answered.value.answered_by == "alice"
    with pytest.raises(AskingChangedError):
        await store.append(run["id"], [answer(pending.request_seq, closed.digest)], expected_seq=last)
    with pytest.raises(UnknownInterruptError):  # an asking that never was
        await store.append(run["id"], [answer(pending.request_seq + 1)], expected_seq=last)
    assert (await store.get_session(run["id"])).last_seq == last
    assert (await Interrupt.objects.aget(pk=second)).status == "pending"


async def test_the_audit_shows_which_asking_each_answer_went_to_and_what_was_shown(
    waiting_run: Callable[..., Any], as_alice: Api, alice: User
) -> None:
    run, first, _ = await _second_payment(waiting_run, as_alice)
    row = await Interrupt.objects.aget(pk=first)
    await as_alice.post(f"interrupts/{first}/answer", APPROVE)  # refused: recorded with its asking
    client = await _page(alice)
    async with request_thread():
        page = (await client.get(f"/runs/{run['id']}/")).content.decode()
    assert f"Answered by alice (the question asked at #{row.request_seq}, as shown {row.digest[:12]})" in page

    admin = await User.objects.acreate_superuser("root", "root@example.com", "x")
    client = await _page(admin)
    async with request_thread():
        listing = (await client.get("/admin/wfapp/answerattempt/")).content.decode()
    assert row.digest in listing


async def test_an_answer_form_that_showed_something_else_is_refused_in_place(
    waiting_run: Callable[..., Any], as_alice: Api, alice: User
) -> None:
    run, first, second = await _second_payment(waiting_run, as_alice)
    before = await event_kinds(run["id"])
    shown_first = (await Interrupt.objects.aget(pk=first)).digest
    client = await _page(alice)
    async with request_thread():
        response = await client.post(
            f"/interrupts/{second}/answer/",
            {"f.approved": "true", "digest": shown_first},
            headers={"HX-Request": "true"},
        )
    assert response.status_code == 409
    assert "what it shows has changed" in response.content.decode()
    assert response["HX-Retarget"] == f"#answer-interrupt-{second}" and response["HX-Reswap"] == "afterbegin"
    assert await event_kinds(run["id"]) == before
    async with request_thread():  # the form as the inbox renders it carries the asking's digest
        inbox = (await client.get("/")).content.decode()
    row = await Interrupt.objects.aget(pk=second)
    assert f'name="digest" value="{row.digest}"' in inbox
    assert f'name="ids" value="{second}:{row.digest}"' in inbox
