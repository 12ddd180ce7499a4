"""Every endpoint with and without permission, through real services, commits and the runtime."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.api.conftest import EXPENSE, Api
from tests.wfapp.helpers import settled
from wfapp.models import Event, Session
from wfapp.web import queries


async def test_workflows_list_and_one_with_graph_and_input_schema(as_alice: Api, workflows: None) -> None:
    listed = (await as_alice.get("workflows")).json()["items"]
    names = [item["name"] for item in listed]
    assert names[:3] == ["expense_approval", "document_review", "batch_review"]
    one = (await as_alice.get("workflows/expense_approval")).json()
    assert one["input_schema"]["required"] == ["employee", "amount", "category", "description"]
    assert {"triage", "manager_review", "combine"} <= {n["name"] for n in one["graph"]["nodes"]}
    assert any(e["routes"] for e in one["graph"]["edges"])
    missing = await as_alice.get("workflows/nope")
    assert missing.status_code == 404 and missing["Content-Type"] == "application/problem+json"
    assert missing.json()["type"] == "/api/v1/problems/not-found"


ENDPOINTS = [
    ("get", "workflows"),
    ("get", "workflows/expense_approval"),
    ("post", "workflows/expense_approval/runs"),
    ("get", "runs"),
    ("get", "runs/RUN"),
    ("get", "runs/RUN/events"),
    ("get", "runs/RUN/stream"),
    ("post", "runs/RUN/cancel"),
    ("post", "runs/RUN/retry"),
    ("get", "interrupts"),
    ("get", "interrupts/stream"),
    ("get", "interrupts/QID"),
    ("post", "interrupts/QID/answer"),
    ("get", "openapi.json"),
]


async def test_every_endpoint_refuses_anonymous_callers_and_changes_nothing(
    waiting_run: Callable[..., Any], anonymous: Api
) -> None:
    run = await waiting_run()
    before = (await Session.objects.acount(), await Event.objects.acount())
    for method, path in ENDPOINTS:
        path = path.replace("RUN", run["id"]).replace("QID", str(run["pending"][0]["id"]))
        body = {"answer": {"approved": True}} if path.endswith("answer") else {"input": EXPENSE}
        response = await (anonymous.get(path) if method == "get" else anonymous.post(path, body))
        assert response.status_code == 401, path
        assert response["Content-Type"] == "application/problem+json"
        assert response.json()["type"] == "/api/v1/problems/unauthenticated"
        assert response["WWW-Authenticate"].startswith("Bearer")
    assert (await Session.objects.acount(), await Event.objects.acount()) == before


async def test_start_read_and_answer_to_completion(
    waiting_run: Callable[..., Any], as_alice: Api, as_bob: Api
) -> None:
    run = await waiting_run(by="rhea")  # alice answers too: not as the run's requester (four-eyes)
    assert run["status"] == "waiting" and run["created_by"] == "rhea"
    assert run["created_at"].endswith("Z") and run["input"] == EXPENSE
    assert run["summary"] == "Ann: 1,500.00 travel" and run["outcome"] is None  # issue 27, item 7
    first, second = run["pending"]
    assert {first["interrupt_id"], second["interrupt_id"]} == {"manager-approval", "finance-approval"}
    listed = (await as_bob.get("interrupts?workflow=expense_approval")).json()
    assert [q["id"] for q in listed["items"]] == [first["id"], second["id"]] and listed["count"] == 2
    one = (await as_bob.get(f"interrupts/{first['id']}")).json()
    assert one["response_schema"]["required"] == ["approved"] and one["status"] == "pending"

    answered = await as_bob.post(f"interrupts/{first['id']}/answer", {"answer": {"approved": True}})
    assert answered.status_code == 200, answered.content
    result = answered.json()
    assert result["question"]["answered_by"] == "bob" and result["question"]["answered_at"].endswith("Z")
    assert result["run"]["status"] == "waiting" and [q["id"] for q in result["run"]["pending"]] == [
        second["id"]
    ]

    done = await as_alice.post(f"interrupts/{second['id']}/answer", {"answer": {"approved": True}})
    assert done.status_code == 200 and done.json()["run"]["status"] == "completed"
    assert done.json()["run"]["output"]["decided_by"] == ["manager", "finance"]
    assert done.json()["run"]["outcome"] == "approved"
    listed_runs = (await as_alice.get("runs?text=1,500.00")).json()["items"]  # found by its summary
    assert [(r["id"], r["summary"], r["outcome"]) for r in listed_runs] == [
        (run["id"], "Ann: 1,500.00 travel", "approved")
    ]

    events = (await as_alice.get(f"runs/{run['id']}/events?after=0")).json()
    seqs = [e["seq"] for e in events["items"]]
    assert seqs == list(range(1, events["last_seq"] + 1)) and events["next_after"] is None
    assert [e["author"] for e in events["items"] if e["kind"] == "answer"] == ["bob", "alice"]
    later = await as_alice.get(f"runs/{run['id']}/events?after=10&limit=3")
    assert [e["seq"] for e in later.json()["items"]] == [11, 12, 13] and later.json()["next_after"] == 13
    again = await as_alice.get(
        f"runs/{run['id']}/events?after=10&limit=3", **{"If-None-Match": later["ETag"]}
    )
    assert again.status_code == 304


async def test_run_reads_carry_an_etag_that_changes_with_the_run(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run = await waiting_run(by="rhea")
    first = await as_alice.get(f"runs/{run['id']}")
    tag = first["ETag"]
    unchanged = await as_alice.get(f"runs/{run['id']}", **{"If-None-Match": tag})
    assert unchanged.status_code == 304 and unchanged["ETag"] == tag
    await as_alice.post(f"interrupts/{run['pending'][0]['id']}/answer", {"answer": {"approved": False}})
    changed = await as_alice.get(f"runs/{run['id']}", **{"If-None-Match": tag})
    assert changed.status_code == 200 and changed["ETag"] != tag


async def test_runs_list_filters_and_pages_with_a_cursor(
    engine_runtime: Any, as_alice: Api, as_mallory: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = []
    for n in range(3):
        made = await as_alice.post(
            "workflows/expense_approval/runs", {"input": {**EXPENSE, "amount": 10 + n}}
        )
        ids.append(made.json()["id"])
        await settled(ids[-1], "completed")
    waiting = await as_alice.post("workflows/expense_approval/runs", {"input": EXPENSE})
    await settled(waiting.json()["id"], "waiting")
    page = (await as_mallory.get("runs?status=completed")).json()  # everyone logged in sees runs
    assert [r["id"] for r in page["items"]] == ids[::-1] and page["next_cursor"] is None
    monkeypatch.setattr(queries, "RUNS_PAGE", 2)
    first = (await as_alice.get("runs?workflow=expense_approval")).json()
    second = (await as_alice.get(f"runs?workflow=expense_approval&after={first['next_cursor']}")).json()
    assert len(first["items"]) == 2 and first["next_cursor"]
    assert [r["id"] for r in first["items"] + second["items"]] == [waiting.json()["id"], *ids[::-1]]
    assert (await as_alice.get(f"runs?q={ids[0][:12]}")).json()["items"][0]["id"] == ids[0]


async def test_without_the_answer_permission_questions_are_not_found(
    waiting_run: Callable[..., Any], as_mallory: Api
) -> None:
    run = await waiting_run()
    qid = run["pending"][0]["id"]
    assert (await as_mallory.get("interrupts")).json() == {"items": [], "next_cursor": None, "count": 0}
    assert (await as_mallory.get(f"interrupts/{qid}")).status_code == 404
    refused = await as_mallory.post(f"interrupts/{qid}/answer", {"answer": {"approved": True}})
    assert refused.status_code == 404 and refused.json()["type"] == "/api/v1/problems/not-found"
    seen = (await as_mallory.get(f"runs/{run['id']}")).json()
    assert seen["status"] == "waiting" and seen["pending"] == []  # the run, but not its questions
    assert await Event.objects.filter(session_id=run["id"], kind="answer").acount() == 0


async def test_cancel_then_a_second_cancel_is_a_conflict(
    waiting_run: Callable[..., Any], as_alice: Api
) -> None:
    run = await waiting_run()
    cancelled = await as_alice.post(f"runs/{run['id']}/cancel")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    again = await as_alice.post(f"runs/{run['id']}/cancel")
    assert again.status_code == 409 and again.json()["type"] == "/api/v1/problems/run-state"
    assert (await as_alice.post("runs/nope/cancel")).status_code == 404


async def test_retry_runs_a_failed_run_again(engine_runtime: Any, as_alice: Api, test_dir: Path) -> None:
    started = await as_alice.post("workflows/flaky/runs", {"input": {"n": 1}})
    run_id = started.json()["id"]
    await settled(run_id, "failed")
    failed = (await as_alice.get(f"runs/{run_id}")).json()
    assert failed["status"] == "failed" and "unavailable" in failed["error"]["message"]
    (test_dir / "healthy").touch()
    retried = await as_alice.post(f"runs/{run_id}/retry")
    assert retried.status_code == 202
    assert (await settled(run_id, "completed")).output == {"ok": {"n": 1}}
    refused = await as_alice.post(f"runs/{run_id}/retry")
    assert refused.status_code == 409 and "only a failed run" in refused.json()["detail"]


@pytest.mark.parametrize("path", ["runs/nope", "runs/nope/events", "runs/nope/stream", "interrupts/123456"])
async def test_unknown_things_are_not_found(as_alice: Api, path: str) -> None:
    response = await as_alice.get(path)
    assert response.status_code == 404 and response.json()["type"] == "/api/v1/problems/not-found"


async def test_without_the_run_permissions_start_cancel_and_retry_are_forbidden(
    waiting_run: Callable[..., Any], as_mallory: Api
) -> None:
    run = await waiting_run()
    before = (await Session.objects.acount(), await Event.objects.acount())
    refusals = [
        await as_mallory.post("workflows/expense_approval/runs", {"input": EXPENSE}),
        await as_mallory.post(f"runs/{run['id']}/cancel"),
        await as_mallory.post(f"runs/{run['id']}/retry"),
    ]
    for refused in refusals:
        assert refused.status_code == 403, refused.content
        problem = refused.json()
        assert problem["type"] == "/api/v1/problems/forbidden" and "mallory may not" in problem["detail"]
    assert (await Session.objects.acount(), await Event.objects.acount()) == before
    assert (await as_mallory.get(f"runs/{run['id']}")).json()["status"] == "waiting"


async def test_questions_page_with_the_inbox_cursor(
    waiting_run: Callable[..., Any], as_bob: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs = [await waiting_run() for _ in range(2)]
    monkeypatch.setattr(queries, "INBOX_PAGE", 3)
    first = (await as_bob.get("interrupts?sort=newest")).json()
    second = (await as_bob.get(f"interrupts?sort=newest&after={first['next_cursor']}")).json()
    asked = [q["id"] for run in runs for q in run["pending"]]
    assert [q["id"] for q in first["items"] + second["items"]] == sorted(asked, reverse=True)
    assert first["count"] == 4 and second["next_cursor"] is None


async def test_an_answer_no_runtime_here_takes_up_is_202(
    transactional_db: None, workflows: None, alice: User, bob: User, as_alice: Api
) -> None:
    """Workers mode: no runtime in this process; the answer is recorded, a worker advances it."""
    from engine import Runner
    from wfapp.registry import get_workflow
    from wfapp.runs import runtime, starting
    from wfapp.runs.runtime import Runtime
    from wfapp.store.events import DjangoEventStore

    runtime.install(Runtime())  # never started: nothing advances runs in this process
    try:
        session_id, _ = await starting.create_run("approval", {"n": 1}, user=bob)  # alice answers
        await Runner(get_workflow("approval"), store=DjangoEventStore()).advance(session_id)
        run = (await as_alice.get(f"runs/{session_id}")).json()
        answered = await as_alice.post(
            f"interrupts/{run['pending'][0]['id']}/answer", {"answer": {"approved": True}}
        )
        assert answered.status_code == 202, answered.content
        body = answered.json()
        assert body["question"]["status"] == "answered" and body["run"]["status"] == "waiting"
        assert body["run"]["pending"] == []
    finally:
        runtime.install(None)
