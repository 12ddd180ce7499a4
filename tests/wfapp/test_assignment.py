"""Issue 17: assignees, claims, reassignment, deadlines and quorums through the services and the CLI."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError

from engine.errors import InterruptClaimedError
from tests.wfapp.helpers import settled, subprocess_env
from tests.wfapp.human_flows import PATHS
from wfapp.errors import InputValidationError, NotAssignedError, NotPermitted, QuestionClosedError
from wfapp.human import claims
from wfapp.models import AnswerAttempt, AttemptOutcome, Event, Interrupt, InterruptStatus
from wfapp.runs import answering, starting
from wfapp.runs.reports import run_report
from wfapp.runs.runtime import Runtime

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def human_flows(settings: Any, workflows: None) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *PATHS.values()]


def person(name: str, *groups: str, admin: bool = False) -> User:
    user = User.objects.create_user(username=name, password="pw-" + name)
    codenames = ["answer_interrupt", "start_run", *(["reassign_interrupt"] if admin else [])]
    user.user_permissions.add(
        *Permission.objects.filter(codename__in=codenames, content_type__app_label="wfapp")
    )
    for group in groups:
        user.groups.add(Group.objects.get_or_create(name=group)[0])
    return User.objects.get(pk=user.pk)


async def waiting_run(workflow: str, node_input: Any, user: Any = None) -> str:
    session_id, _ = await starting.create_run(workflow, node_input, user=user, advance=True)
    await settled(session_id, "waiting", "failed")
    return session_id


async def row(session_id: str) -> Interrupt:
    return await Interrupt.objects.select_related("session").aget(
        session_id=session_id, interrupt_id="decide"
    )


async def decisions(session_id: str) -> list[tuple[str, str]]:
    rows = Event.objects.filter(session_id=session_id, kind="assignment").order_by("seq")
    return [(r.data["assignment"]["decision"], r.author) async for r in rows]


async def test_an_unknown_assignee_fails_the_node_naming_it(
    engine_runtime: Runtime, human_flows: None
) -> None:
    await sync_to_async(person)("ann")
    session_id = await waiting_run("assigned", {"assignees": ["ann", "nobody", "group:ghosts"]})
    session = await settled(session_id, "failed")
    assert "assigns its question to 'nobody', 'group:ghosts', which are no known users or groups" in (
        session.error or {}
    ).get("message", "")
    assert not await Interrupt.objects.filter(session_id=session_id).aexists()


async def test_only_assignees_answer_and_a_refusal_is_audited(
    engine_runtime: Runtime, human_flows: None
) -> None:
    ann, bob, carl = [
        await sync_to_async(person)(*spec) for spec in (("ann",), ("bob", "finance"), ("carl",))
    ]
    session_id = await waiting_run("assigned", {"assignees": ["ann", "group:finance"]})
    question = await row(session_id)
    assert question.assignees == "|ann|group:finance|"
    with pytest.raises(
        NotAssignedError, match="carl may not answer: this question is assigned to ann, group:finance"
    ):
        await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=carl)
    attempt = await AnswerAttempt.objects.filter(session_id=session_id).alatest("pk")
    assert (attempt.actor, attempt.outcome) == ("carl", AttemptOutcome.FORBIDDEN)
    assert (await row(session_id)).status == InterruptStatus.PENDING
    # bob answers through group:finance
    await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=bob)
    assert (await settled(session_id, "completed")).output == {"approved": True}
    assert ann.username == "ann"


async def test_two_claims_one_wins_and_the_holder_alone_answers(
    engine_runtime: Runtime, human_flows: None
) -> None:
    ann, bob = [await sync_to_async(person)(name, "finance") for name in ("ann", "bob")]
    session_id = await waiting_run("assigned", {"assignees": ["group:finance"]})
    outcomes = await asyncio.gather(
        claims.claim_interrupt(session_id, "decide", user=ann),
        claims.claim_interrupt(session_id, "decide", user=bob),
        return_exceptions=True,
    )
    lost = [o for o in outcomes if isinstance(o, BaseException)]
    assert len(lost) == 1 and isinstance(lost[0], InterruptClaimedError), outcomes
    holder = (await row(session_id)).claimed_by
    other = bob if holder == "ann" else ann
    assert holder in ("ann", "bob") and await decisions(session_id) == [("claim", holder)]
    with pytest.raises(NotAssignedError, match=f"claimed by {holder}"):
        await answering.answer_interrupt(session_id, "decide", {"approved": False}, user=other)
    with pytest.raises(InterruptClaimedError):
        await claims.unclaim_interrupt(session_id, "decide", user=other)
    await claims.unclaim_interrupt(session_id, "decide", user=ann if holder == "ann" else bob)
    assert (await row(session_id)).claimed_by == ""
    await answering.answer_interrupt(session_id, "decide", {"approved": False}, user=other)
    assert (await settled(session_id, "completed")).output["approved"] is False
    for late in (claims.claim_interrupt, claims.unclaim_interrupt):  # closed: one error for all callers
        with pytest.raises(QuestionClosedError, match=r"'decide' of run .* is no longer pending"):
            await late(session_id, "decide", user=other)
    assert await decisions(session_id) == [("claim", holder), ("unclaim", holder)]


async def test_an_admin_reassigns_and_bad_names_change_nothing(
    engine_runtime: Runtime, human_flows: None
) -> None:
    ann, root = await sync_to_async(person)("ann"), await sync_to_async(person)("root", admin=True)
    dave = await sync_to_async(person)("dave")
    session_id = await waiting_run("assigned", {"assignees": ["ann"]})
    await claims.claim_interrupt(session_id, "decide", user=ann)
    with pytest.raises(NotPermitted, match="ann may not reassign questions"):
        await claims.reassign_interrupt(session_id, "decide", ["dave"], user=ann)
    with pytest.raises(InputValidationError, match="no known user or group: zed"):
        await claims.reassign_interrupt(session_id, "decide", ["dave", "zed"], user=root)
    assert await decisions(session_id) == [("claim", "ann")]
    await claims.reassign_interrupt(session_id, "decide", ["dave"], user=root)
    question = await row(session_id)
    assert (question.assignees, question.claimed_by) == ("|dave|", "dave")
    with pytest.raises(NotAssignedError):
        await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=ann)
    await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=dave)
    await settled(session_id, "completed")
    assert await decisions(session_id) == [("claim", "ann"), ("reassign", "root")]


async def test_a_quorum_collects_distinct_approvals_and_keeps_the_requester_out(
    engine_runtime: Runtime, human_flows: None
) -> None:
    fred, fiona, finn = [await sync_to_async(person)(name, "finance") for name in ("fred", "fiona", "finn")]
    session_id = await waiting_run(
        "quorum", {"assignees": ["group:finance"], "approvals_required": 2}, user=finn
    )
    with pytest.raises(NotAssignedError, match="finn started this run and may not approve it"):
        await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=finn)
    await answering.answer_interrupt(session_id, "decide", {"approved": True, "comment": "fine"}, user=fred)
    question = await row(session_id)
    assert question.status == InterruptStatus.PENDING
    assert question.approvals == [{"actor": "fred", "answer": {"approved": True, "comment": "fine"}}]
    with pytest.raises(NotAssignedError, match="fred has already approved"):
        await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=fred)
    await answering.answer_interrupt(session_id, "decide", {"approved": True}, user=fiona)
    done = await settled(session_id, "completed")
    assert [given["actor"] for given in done.output] == ["fred", "fiona"]
    answered = await row(session_id)
    assert (answered.status, answered.answered_by) == (InterruptStatus.ANSWERED, "fiona")


def _fire_in_subprocess(go: Path) -> subprocess.Popen[str]:
    script = (
        "import asyncio, os, time, django; django.setup()\n"
        "from wfapp.runs import timers\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\n"
        "print(asyncio.run(timers.fire_due()))\n"
    )
    extra = ",".join(PATHS.values())
    env = subprocess_env()
    env["WFAPP_EXTRA_WORKFLOWS"] = f"{env['WFAPP_EXTRA_WORKFLOWS']},{extra}"
    return subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_a_deadline_fires_exactly_once_with_two_processes_firing(
    engine_runtime: Runtime, human_flows: None, tmp_path: Path
) -> None:
    due = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()  # already due when asked
    session_id = await waiting_run(
        "deadline", {"due": due, "default": {"approved": False, "comment": "late"}}
    )
    question = await row(session_id)
    assert question.status == InterruptStatus.PENDING and question.due_at is not None
    go = tmp_path / "go"
    processes = [_fire_in_subprocess(go) for _ in range(2)]
    go.touch()
    outputs = [process.communicate(timeout=120) for process in processes]
    assert [process.returncode for process in processes] == [0, 0], outputs
    # One of them recorded it (or this process's maintenance did first); never two.
    fired = [out.strip() for out, _ in outputs]
    assert sorted(fired, key=len)[0] == "[]" and set(fired) <= {"[]", f"['{session_id}']"}, outputs
    answers = [e async for e in Event.objects.filter(session_id=session_id, kind="answer")]
    assert [(e.author, e.data["answer"]["value"]) for e in answers] == [
        ("deadline", {"approved": False, "comment": "late"})
    ]
    await engine_runtime.sweep()  # this process's maintenance: nothing left to fire, the run goes on
    done = await settled(session_id, "completed")
    assert done.output == {"approved": False, "comment": "late"}
    assert (await row(session_id)).answered_by == "deadline"
    shown = await sync_to_async(run_report)(session_id)  # what `manage.py wf show` prints
    assert [(a["id"], a["answered_by"]) for a in shown["answered"]] == [("decide", "deadline")]


def _wf(*args: str) -> str:
    out = StringIO()
    call_command("wf", *args, stdout=out)
    return out.getvalue()


def test_the_cli_answer_obeys_assignees_and_the_quorum(queue_worker: None, alice: User) -> None:
    """``wf answer --user`` refuses whom the pages refuse: an outsider, an approval twice."""
    for name in ("olaf",):
        person(name)
    expense = {"employee": "ann", "amount": 25000, "category": "equipment", "description": "servers"}
    started = json.loads(_wf("start", "expense_approval", "--input", json.dumps(expense), "--user", "alice"))
    run = started["run"]
    finance = next(item for item in started["pending"] if item["id"] == "finance-approval")
    assert (finance["assignees"], finance["approvals_required"]) == (["group:finance"], 2)
    yes = json.dumps({"approved": True, "comment": "ok"})
    with pytest.raises(
        CommandError, match="olaf may not answer: this question is assigned to group:managers"
    ):
        _wf("answer", run, "manager-approval", "--answer", yes, "--user", "olaf")
    with pytest.raises(CommandError, match="alice started this run and may not approve it"):
        _wf("answer", run, "finance-approval", "--answer", yes, "--user", "alice")
    person("fred", "finance")
    person("fiona", "finance")
    half = json.loads(_wf("answer", run, "finance-approval", "--answer", yes, "--user", "fred"))
    finance = next(item for item in half["pending"] if item["id"] == "finance-approval")
    assert [given["actor"] for given in finance["approvals"]] == ["fred"]
    with pytest.raises(CommandError, match="fred has already approved"):
        _wf("answer", run, "finance-approval", "--answer", yes, "--user", "fred")
    _wf("answer", run, "finance-approval", "--answer", yes, "--user", "fiona")
    with pytest.raises(CommandError, match="alice started this run and may not approve it"):
        _wf("answer", run, "manager-approval", "--answer", yes, "--user", "alice")  # four-eyes, by default
    person("mona", "managers")
    done = json.loads(_wf("answer", run, "manager-approval", "--answer", yes, "--user", "mona"))
    assert done["status"] == "completed" and done["output"]["approved"] is True
    assert done["output"]["comments"] == ["manager: ok", "finance: ok", "finance: ok"]


async def test_the_scaled_modes_periodic_job_fires_due_deadlines(
    engine_runtime: Runtime, human_flows: None
) -> None:
    from procrastinate.contrib.django import app

    from wfapp.worker import deadlines

    periodic = [entry.task.name for entry in app.periodic_registry.periodic_tasks.values()]
    assert deadlines.DEADLINES_TASK in periodic
    due = (datetime.now(UTC) - timedelta(seconds=1)).isoformat()
    session_id = await waiting_run("deadline", {"due": due, "default": {"approved": True}})
    result = await deadlines.fire_deadlines.func(0)
    assert result["answered"] in ([session_id], [])  # [] when this process's maintenance was first
    assert (await settled(session_id, "completed")).output == {"approved": True}
    assert (await row(session_id)).answered_by == "deadline"
