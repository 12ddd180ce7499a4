"""Issue 24, item 1: ``wf answer`` says which asking it answered, and ``--asking`` pins one."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from wfapp.models import AnswerAttempt, Event, Interrupt

pytestmark = pytest.mark.usefixtures("queue_worker")
APPROVE = '{"approved": true}'


def wf(*args: str) -> Any:
    out = StringIO()
    call_command("wf", *args, stdout=out)
    return json.loads(out.getvalue())


def test_wf_answer_reports_the_asking_and_refuses_a_pinned_one_that_closed(alice: User, bob: User) -> None:
    started = wf("start", "payments", "--input", "{}", "--user", "bob")  # alice answers: not her run
    [first] = started["pending"]
    assert (first["id"], first["payload"]) == ("payment", {"number": 1, "amount": 10})
    pin = ["--asking", str(first["request_seq"]), "--digest", first["digest"]]

    answered = wf("answer", started["run"], "payment", "--answer", APPROVE, "--user", "alice", *pin)
    asking = answered["answered_asking"]
    assert (asking["question"], asking["request_seq"], asking["status"]) == (
        first["question"],
        first["request_seq"],
        "answered",
    )
    [second] = answered["pending"]
    assert second["payload"] == {"number": 2, "amount": 99_999}
    events = Event.objects.filter(session_id=started["run"]).count()

    # The same command again (a script's retry): payment #2 is not approved.
    with pytest.raises(CommandError, match=r"asked at seq \d+ was already answered by alice"):
        wf("answer", started["run"], "payment", "--answer", APPROVE, "--user", "alice", *pin)
    assert Event.objects.filter(session_id=started["run"]).count() == events
    assert Interrupt.objects.get(pk=second["question"]).status == "pending"

    # Payment #2's asking with what payment #1 showed: refused too.
    shown_first = ["--asking", str(second["request_seq"]), "--digest", first["digest"]]
    with pytest.raises(CommandError, match="what it shows has changed"):
        wf("answer", started["run"], "payment", "--answer", APPROVE, "--user", "alice", *shown_first)
    assert Event.objects.filter(session_id=started["run"]).count() == events
    outcomes = list(
        AnswerAttempt.objects.filter(session_id=started["run"]).values_list("outcome", "request_seq")
    )
    assert outcomes == [
        ("accepted", first["request_seq"]),
        ("already_answered", first["request_seq"]),
        ("stale", second["request_seq"]),
    ]


def test_wf_answer_refuses_an_asking_the_run_never_made(alice: User) -> None:
    started = wf("start", "payments", "--input", "{}", "--user", "alice")
    with pytest.raises(CommandError, match="never asked 'payment' at seq 999"):
        wf("answer", started["run"], "payment", "--answer", APPROVE, "--user", "alice", "--asking", "999")
    with pytest.raises(CommandError, match="--digest goes with --asking"):
        wf("answer", started["run"], "payment", "--answer", APPROVE, "--user", "alice", "--digest", "ab")
    assert Event.objects.filter(session_id=started["run"], kind="answer").count() == 0
