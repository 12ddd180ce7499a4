"""Answers through the API and the pages at the same time: exactly one wins, the other hears who."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from django.test import AsyncClient

from tests.api.conftest import Api, request_thread
from wfapp.models import AnswerAttempt, Event, Interrupt


async def _page_answer(user: User, pk: int) -> Any:
    client = AsyncClient()
    await client.aforce_login(user)
    async with request_thread():
        return await client.post(
            f"/interrupts/{pk}/answer/", {"f.approved": "false"}, headers={"HX-Request": "true"}
        )


async def test_api_and_page_answer_races_have_one_winner(
    waiting_run: Callable[..., Any], as_alice: Api, bob: User
) -> None:
    for _ in range(3):
        run = await waiting_run(by="rhea")
        qid = run["pending"][0]["id"]
        api, page = await asyncio.gather(
            as_alice.post(f"interrupts/{qid}/answer", {"answer": {"approved": True}}), _page_answer(bob, qid)
        )
        row = await Interrupt.objects.aget(pk=qid)
        assert await Event.objects.filter(session_id=run["id"], kind="answer").acount() == 1
        assert (
            await AnswerAttempt.objects.filter(session_id=run["id"], outcome="already_answered").acount() == 1
        )
        if row.answered_by == "alice":
            assert api.status_code in (200, 202) and row.answer["approved"] is True
            assert page.status_code == 409 and "Already answered by alice" in page.content.decode()
        else:
            assert row.answered_by == "bob" and page.status_code == 200
            assert api.status_code == 409 and api["Content-Type"] == "application/problem+json"
            problem = api.json()
            assert problem["type"] == "/api/v1/problems/already-answered"
            assert problem["answered_by"] == "bob" and problem["answered_at"].endswith("Z")
            assert "bob" in problem["detail"]
