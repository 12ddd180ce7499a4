"""``manage.py wf``: a round trip through each demo, and bad input refused with nothing written."""

from __future__ import annotations

import json
import subprocess
import sys
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from tests.wfapp.helpers import subprocess_env
from wfapp.models import AnswerAttempt, Event, Interrupt, Session

ROOT = Path(__file__).resolve().parents[2]

# In workers mode the CLI defers to the workers and waits for one: a worker runs meanwhile.
pytestmark = pytest.mark.usefixtures("queue_worker")


def wf(*args: str) -> Any:
    out = StringIO()
    call_command("wf", *args, stdout=out)
    return json.loads(out.getvalue())


def pending(report: dict[str, Any]) -> list[str]:
    return [item["id"] for item in report["pending"]]


def test_list_names_the_demos(transactional_db: None) -> None:
    listed = {item["name"]: item for item in wf("list")}
    assert {"expense_approval", "document_review", "batch_review"} <= set(listed)
    assert listed["expense_approval"]["input_schema"]["required"] == [
        "employee",
        "amount",
        "category",
        "description",
    ]


def test_expense_approval_round_trip(alice: User, bob: User) -> None:
    """alice files it; bob decides (a requester never approves their own run)."""
    expense = {"employee": "ann", "amount": 2500, "category": "equipment", "description": "laptop"}
    started = wf("start", "expense_approval", "--input", json.dumps(expense), "--user", "alice")
    assert started["status"] == "waiting" and started["created_by"] == "alice"
    assert sorted(pending(started)) == ["finance-approval", "manager-approval"]
    run = started["run"]
    halfway = wf(
        "answer",
        run,
        "manager-approval",
        "--answer",
        '{"approved": true, "comment": "ok"}',
        "--user",
        "bob",
    )
    assert (halfway["status"], pending(halfway)) == ("waiting", ["finance-approval"])
    done = wf(
        "answer",
        run,
        "finance-approval",
        "--answer",
        '{"approved": false, "comment": "over budget"}',
        "--user",
        "bob",
    )
    assert done["status"] == "completed"
    assert done["output"]["approved"] is False
    assert done["output"]["decided_by"] == ["manager", "finance"]
    assert done["output"]["comments"] == ["manager: ok", "finance: over budget"]
    shown = wf("show", run, "--events")
    assert shown["status"] == "completed" and shown["events"][-1]["status"] == "completed"
    assert [a["id"] for a in shown["answered"]] == ["manager-approval", "finance-approval"]


def test_manager_only_expense_skips_the_join(alice: User) -> None:
    expense = {"employee": "ann", "amount": 300, "category": "meals", "description": "team lunch"}
    started = wf("start", "expense_approval", "--input", json.dumps(expense))
    assert pending(started) == ["manager-approval"]
    done = wf(
        "answer", started["run"], "manager-approval", "--answer", '{"approved": true}', "--user", "alice"
    )
    assert done["output"]["decided_by"] == ["manager"]
    paths = Event.objects.filter(session_id=started["run"], kind="started").values_list(
        "node_path", flat=True
    )
    assert not any("combine" in path or "finance" in path for path in paths)


def test_document_review_round_trip(alice: User) -> None:
    started = wf("start", "document_review", "--input", '{"title": "Caching", "topic": "HTTP caching"}')
    run = started["run"]
    assert pending(started) == ["review-1"]
    assert started["pending"][0]["payload"]["draft"].startswith("# Caching")
    second = wf(
        "answer",
        run,
        "review-1",
        "--answer",
        '{"approved": false, "feedback": "add examples"}',
        "--user",
        "alice",
    )
    assert pending(second) == ["review-2"]
    assert 'addressed the feedback "add examples"' in second["pending"][0]["payload"]["draft"]
    done = wf("answer", run, "review-2", "--answer", '{"approved": true, "feedback": ""}', "--user", "alice")
    assert done["status"] == "completed"
    assert (done["output"]["approved"], done["output"]["rounds"]) == (True, 2)


def test_document_review_stops_after_five_rounds(alice: User) -> None:
    run = wf("start", "document_review", "--input", '{"title": "T", "topic": "t"}')["run"]
    for round_number in range(1, 6):
        report = wf(
            "answer",
            run,
            f"review-{round_number}",
            "--answer",
            '{"approved": false, "feedback": "no"}',
            "--user",
            "alice",
        )
    assert report["status"] == "completed"
    assert (report["output"]["approved"], report["output"]["rounds"]) == (False, 5)


def test_batch_review_round_trip(alice: User) -> None:
    items = [
        {"sku": "A-1", "price": 10, "flagged": False},
        {"sku": "B-2", "price": 99.5, "flagged": True},
        {"sku": "C-3", "price": 5, "flagged": True},
    ]
    started = wf("start", "batch_review", "--input", json.dumps({"items": items}))
    assert sorted(pending(started)) == ["item-2-B-2", "item-3-C-3"]
    run = started["run"]
    wf("answer", run, "item-3-C-3", "--answer", '{"approve": false}', "--user", "alice")
    done = wf("answer", run, "item-2-B-2", "--answer", '{"approve": true}', "--user", "alice")
    assert done["status"] == "completed"
    assert [(i["sku"], i["outcome"]) for i in done["output"]["items"]] == [
        ("A-1", "passed"),
        ("B-2", "approved"),
        ("C-3", "rejected"),
    ]


def _nothing_written() -> bool:
    return not (Session.objects.exists() or Event.objects.exists() or Interrupt.objects.exists())


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["start", "nope", "--input", "{}"], "Unknown workflow 'nope'"),
        (["start", "expense_approval", "--input", "{not json"], "Malformed JSON in --input"),
        (
            [
                "start",
                "expense_approval",
                "--input",
                '{"employee": "a", "amount": 0, "category": "meals", "description": ""}',
            ],
            "amount",
        ),
        (["show", "missing"], "Unknown run 'missing'"),
        (["answer", "missing", "x", "--answer", "true", "--user", "alice"], "Unknown run 'missing'"),
        (["answer", "missing", "x", "--answer", "true", "--user", "nobody"], "Unknown user 'nobody'"),
        (["start", "expense_approval", "--input", "[" + "1," * 40000 + "1]"], "limit"),
        (["start", "expense_approval", "--input", "{}"], r"employee: This field is required\.; amount"),
    ],
)
def test_bad_input_is_refused_and_writes_nothing(alice: User, args: list[str], message: str) -> None:
    with pytest.raises(CommandError, match=message):
        wf(*args)
    assert _nothing_written()


def test_bad_answers_change_nothing(alice: User, mallory: User) -> None:
    run = wf("start", "document_review", "--input", '{"title": "T", "topic": "t"}')["run"]
    before = Event.objects.filter(session_id=run).count()
    for args, message in [
        (["review-1", "--answer", '{"approved": "maybe"}', "--user", "alice"], "approved"),
        (
            ["review-9", "--answer", '{"approved": true}', "--user", "alice"],
            "no pending interrupt 'review-9'; it waits for: review-1",
        ),
        (["review-1", "--answer", "{oops", "--user", "alice"], "Malformed JSON in --answer"),
        (["review-1", "--answer", '{"approved": true}', "--user", "mallory"], "may not answer"),
        (
            [
                "review-1",
                "--answer",
                json.dumps({"approved": True, "feedback": "x" * 70000}),
                "--user",
                "alice",
            ],
            "limit",
        ),
    ]:
        with pytest.raises(CommandError, match=message):
            wf("answer", run, *args)
    assert Event.objects.filter(session_id=run).count() == before
    assert Interrupt.objects.get(session_id=run).status == "pending"
    outcomes = list(AnswerAttempt.objects.values_list("actor", "outcome"))
    # Every attempt on the known question is audited; the unknown one (review-9) is not.
    assert outcomes == [
        ("alice", "invalid"),
        ("alice", "invalid"),
        ("mallory", "forbidden"),
        ("alice", "too_large"),
    ]


def test_a_late_answer_names_who_answered_first_and_when(alice: User) -> None:
    run = wf("start", "document_review", "--input", '{"title": "T", "topic": "t"}')["run"]
    wf("answer", run, "review-1", "--answer", '{"approved": true}', "--user", "alice")
    late = (
        r"'review-1' was already answered by alice at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC; this answer was not"
    )
    with pytest.raises(CommandError, match=late):
        wf("answer", run, "review-1", "--answer", '{"approved": false}', "--user", "alice")


def test_the_command_line_exits_non_zero_with_a_message(transactional_db: None) -> None:
    done = subprocess.run(
        [sys.executable, "manage.py", "wf", "start", "nope", "--input", "{}"],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Unknown workflow 'nope'" in done.stderr and done.stdout == "", (done.stdout, done.stderr)
    ok = subprocess.run(
        [
            sys.executable,
            "manage.py",
            "wf",
            "start",
            "expense_approval",
            "--input",
            '{"employee": "a", "amount": 12, "category": "meals", "description": "tea"}',
        ],
        cwd=ROOT,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["status"] == "completed"
