"""Comments through the API: on a run and on its questions, the run page's permissions and
limits, listed in order, and in the run's events as ``comment`` events."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.api.conftest import Api, field_errors
from tests.api.conftest import event_kinds as _kinds


async def test_comments_on_a_run_and_its_question_are_listed_in_order_and_are_events(
    waiting_run: Callable[..., Any], as_alice: Api, as_bob: Api
) -> None:
    run = await waiting_run()
    manager = run["pending"][0]
    first = await as_alice.post(f"runs/{run['id']}/comments", {"text": "  Checking the receipts.  "})
    assert first.status_code == 201, first.content
    assert first.json()["text"] == "Checking the receipts." and first.json()["by"] == "alice"
    assert first.json()["interrupt_id"] is None and first.json()["at"].endswith("Z")
    second = await as_bob.post(f"interrupts/{manager['id']}/comments", {"text": "Over budget?"})
    assert second.status_code == 201, second.content
    third = await as_alice.post(
        f"runs/{run['id']}/comments", {"text": "Within policy.", "question": manager["id"]}
    )
    assert third.status_code == 201, third.content

    listed = (await as_alice.get(f"runs/{run['id']}/comments")).json()["items"]
    assert [(c["by"], c["text"], c["interrupt_id"]) for c in listed] == [
        ("alice", "Checking the receipts.", None),
        ("bob", "Over budget?", "manager-approval"),
        ("alice", "Within policy.", "manager-approval"),
    ]
    assert [c["seq"] for c in listed] == sorted(c["seq"] for c in listed)
    about = (await as_bob.get(f"interrupts/{manager['id']}/comments")).json()["items"]
    assert [c["text"] for c in about] == ["Over budget?", "Within policy."]
    other = run["pending"][1]
    assert (await as_bob.get(f"interrupts/{other['id']}/comments")).json() == {
        "items": [],
        "next_after": None,
    }

    events = (await as_alice.get(f"runs/{run['id']}/events?after={run['last_seq']}")).json()["items"]
    assert [(e["kind"], e["seq"], e["data"]["message"]) for e in events] == [
        ("comment", c["seq"], c["text"]) for c in listed
    ]
    still = (await as_alice.get(f"runs/{run['id']}")).json()
    assert still["status"] == "waiting" and len(still["pending"]) == 2  # a comment changes nothing


async def test_comments_come_a_page_at_a_time(waiting_run: Callable[..., Any], as_alice: Api) -> None:
    run = await waiting_run()
    question = run["pending"][0]["id"]
    for n in range(5):
        body = {"text": f"note {n}", **({"question": question} if n % 2 else {})}
        assert (await as_alice.post(f"runs/{run['id']}/comments", body)).status_code == 201
    texts, after, pages = [], 0, 0
    while after is not None:
        page = (await as_alice.get(f"runs/{run['id']}/comments?limit=2&after={after}")).json()
        texts += [c["text"] for c in page["items"]]
        after, pages = page["next_after"], pages + 1
    assert texts == [f"note {n}" for n in range(5)] and pages == 3
    first = (await as_alice.get(f"interrupts/{question}/comments?limit=1")).json()
    assert [c["text"] for c in first["items"]] == ["note 1"]
    rest = (await as_alice.get(f"interrupts/{question}/comments?after={first['next_after']}")).json()
    assert [c["text"] for c in rest["items"]] == ["note 3"] and rest["next_after"] is None
    for bad in ("limit=0", "limit=101", "after=-1", "after=x"):
        assert (await as_alice.get(f"runs/{run['id']}/comments?{bad}")).status_code == 422


async def test_who_may_read_and_add_comments_is_who_may_on_the_run_page(
    waiting_run: Callable[..., Any], as_alice: Api, as_mallory: Api, anonymous: Api
) -> None:
    run = await waiting_run()
    question = run["pending"][0]
    await as_alice.post(f"runs/{run['id']}/comments", {"text": "Noted."})
    before = await _kinds(run["id"])
    # mallory may view the run (and so read its comments) but not answer: no commenting.
    assert [c["text"] for c in (await as_mallory.get(f"runs/{run['id']}/comments")).json()["items"]] == [
        "Noted."
    ]
    refused = await as_mallory.post(f"runs/{run['id']}/comments", {"text": "Mine."})
    assert refused.status_code == 403 and "mallory may not comment" in refused.json()["detail"]
    hidden = await as_mallory.post(f"interrupts/{question['id']}/comments", {"text": "Mine."})
    assert hidden.status_code == 404  # a question she may not answer does not exist for her
    assert (await as_mallory.get(f"interrupts/{question['id']}/comments")).status_code == 404
    for path in (f"runs/{run['id']}/comments", f"interrupts/{question['id']}/comments"):
        assert (await anonymous.get(path)).status_code == 401
        assert (await anonymous.post(path, {"text": "Hi."})).status_code == 401
    assert (await as_alice.post("runs/nope/comments", {"text": "Hi."})).status_code == 404
    assert (await as_alice.get("runs/nope/comments")).status_code == 404
    assert (await as_alice.post("interrupts/999999/comments", {"text": "Hi."})).status_code == 404
    assert await _kinds(run["id"]) == before


@pytest.mark.parametrize(
    ("body", "field", "words"),
    [
        ({"text": "   "}, "text", "needs some text"),
        ({"text": "x" * 5001}, "text", "at most 5000 characters; this one has 5001"),
        ({"text": "a\x00b"}, "text", "NUL"),
        ({"text": 5}, "text", "string"),
        ({}, "text", "required"),
        ({"text": "Hi.", "question": 999999}, "question", "has no question 999999"),
        ({"text": "Hi.", "mood": "sunny"}, "mood", "Extra inputs"),
    ],
)
async def test_a_bad_comment_is_a_422_naming_the_field_and_adds_nothing(
    waiting_run: Callable[..., Any], as_alice: Api, body: dict[str, Any], field: str, words: str
) -> None:
    run = await waiting_run()
    before = await _kinds(run["id"])
    errors = field_errors(await as_alice.post(f"runs/{run['id']}/comments", body))
    assert words.lower() in errors.get(field, "").lower(), errors
    assert await _kinds(run["id"]) == before


async def test_a_comment_body_over_the_size_limit_is_a_413(
    waiting_run: Callable[..., Any], as_alice: Api, settings: Any
) -> None:
    run = await waiting_run()
    before = await _kinds(run["id"])
    huge = {"text": "y" * (settings.WFAPP_MAX_ANSWER_BYTES + 10)}
    refused = await as_alice.post(f"interrupts/{run['pending'][0]['id']}/comments", huge)
    assert refused.status_code == 413 and refused.json()["type"] == "/api/v1/problems/payload-too-large"
    assert await _kinds(run["id"]) == before
