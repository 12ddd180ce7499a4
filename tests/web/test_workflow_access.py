"""Per-workflow permissions: start / answer / view × pages, fragments, websockets, bulk, CLI, API.

``expense_approval`` gets rules: the group "payables" may start, answer and view it, "auditors"
may only view it. ``document_review`` has no rule, so the global permissions decide for it as
before. Olga holds every global permission but is in neither group: for her the expense runs do
not exist (404 everywhere), while she still runs document reviews.
"""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from tests.api.conftest import Api, token_for
from tests.web.conftest import BIG_EXPENSE, client_for, make_user, pending
from tests.web.test_consumers import ORIGIN, _cookie, drain
from wfapp.asgi import application
from wfapp.human import permissions
from wfapp.models import AnswerAttempt, InterruptStatus, Session, WorkflowAccess
from wfapp.web import queries

EXPENSE = "expense_approval"


def _rules() -> dict[str, User]:
    payables = Group.objects.get_or_create(name="payables")[0]
    auditors = Group.objects.get_or_create(name="auditors")[0]
    WorkflowAccess.objects.create(workflow=EXPENSE, group=payables, may_start=True, may_answer=True)
    WorkflowAccess.objects.create(workflow=EXPENSE, group=auditors, may_view=True)
    fin = make_user("fin", may_answer=False)
    fin.groups.add(payables, Group.objects.get_or_create(name="managers")[0])  # the demo assigns managers
    audrey = make_user("audrey", may_answer=False)
    audrey.groups.add(auditors)
    olga = make_user("olga", may_answer=True)
    assert olga.has_perm("wfapp.answer_interrupt")
    return {name: User.objects.get(username=name) for name in ("fin", "audrey", "olga")}


@pytest.fixture
def people(db: None) -> dict[str, User]:
    return _rules()


def test_the_decision_for_each_action(people: dict[str, User]) -> None:
    fin, audrey, olga = people["fin"], people["audrey"], people["olga"]
    table = {
        user.username: tuple(
            permissions.may(user, action, workflow)
            for workflow in (EXPENSE, "document_review")
            for action in ("start", "answer", "view")
        )
        for user in (fin, audrey, olga)
    }
    assert table == {
        # expense: start answer view | document_review (no rule: global permissions)
        "fin": (True, True, True, False, False, True),
        "audrey": (False, False, True, False, False, True),
        "olga": (False, False, False, True, True, True),
    }
    assert set(permissions.users_who_may("answer", EXPENSE)) == {fin}
    assert olga in set(permissions.users_who_may("answer", "document_review"))
    assert fin not in set(permissions.users_who_may("answer", "document_review"))


def test_pages_and_fragments_are_404_for_what_one_may_not_view(
    people: dict[str, User], start_run: Any
) -> None:
    run = start_run(EXPENSE, BIG_EXPENSE, people["fin"])
    [question, *_] = pending(run)
    olga, audrey, fin = (client_for(people[name]) for name in ("olga", "audrey", "fin"))
    for path in (f"/runs/{run}/", f"/runs/{run}/events/?before=3", f"/interrupts/{question.pk}/"):
        assert olga.get(path).status_code == 404, path
    assert olga.post(f"/runs/{run}/cancel/").status_code == 404
    assert run not in olga.get("/runs/").content.decode()
    assert question.message not in olga.get("/").content.decode()
    # The auditor sees the run, not its questions' forms; payables sees and answers.
    assert audrey.get(f"/runs/{run}/").status_code == 200
    assert audrey.get(f"/interrupts/{question.pk}/").status_code == 404
    assert run in audrey.get("/runs/").content.decode()
    assert fin.get(f"/interrupts/{question.pk}/").status_code == 200
    assert question.message in fin.get("/").content.decode()


def test_answering_a_question_of_a_workflow_one_may_not_answer(
    people: dict[str, User], start_run: Any
) -> None:
    run = start_run(EXPENSE, BIG_EXPENSE)  # not fin's own run: fin answers it (four-eyes)
    [question, *_] = pending(run)
    body = {"f.approved": "true", "f.comment": "no"}
    for name in ("olga", "audrey"):
        response = client_for(people[name]).post(f"/interrupts/{question.pk}/answer/", body)
        assert response.status_code == 404
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING
    refused = AnswerAttempt.objects.filter(session_id=run, outcome="forbidden")
    assert set(refused.values_list("actor", flat=True)) == {"olga", "audrey"}
    response = client_for(people["fin"]).post(f"/interrupts/{question.pk}/answer/", {"f.approved": "true"})
    assert response.status_code in (200, 302), response.content.decode()[-3000:]
    question.refresh_from_db()
    assert (question.status, question.answered_by) == (InterruptStatus.ANSWERED, "fin")


def test_bulk_answers_only_what_one_may_answer(people: dict[str, User], start_run: Any) -> None:
    expense = start_run(EXPENSE, BIG_EXPENSE, people["fin"])
    review = start_run("document_review", {"title": "Bulk", "topic": "bulk"})  # not olga's own
    ids = [str(row.pk) for row in pending()]
    response = client_for(people["olga"]).post("/inbox/bulk/", {"decision": "approve", "ids": ids})
    text = response.content.decode()
    assert "Not found." in text
    assert all(row.status == InterruptStatus.PENDING for row in pending(expense))
    assert not pending(review)  # olga may answer document reviews: this one went through


def test_starting_needs_the_rule(people: dict[str, User]) -> None:
    form = {f"f.{k}": str(v) for k, v in BIG_EXPENSE.items()}
    assert client_for(people["olga"]).post(f"/workflows/{EXPENSE}/start/", form).status_code == 403
    assert client_for(people["audrey"]).post(f"/workflows/{EXPENSE}/start/", form).status_code == 403
    assert not Session.objects.exists()
    response = client_for(people["fin"]).post(f"/workflows/{EXPENSE}/start/", form)
    assert response.status_code in (200, 302)
    assert Session.objects.filter(workflow=EXPENSE).count() == 1
    assert client_for(people["fin"]).get(f"/workflows/{EXPENSE}/").status_code == 200


def test_a_workflow_without_rules_behaves_as_before(people: dict[str, User], start_run: Any) -> None:
    run = start_run("document_review", {"title": "Rules", "topic": "rules"}, people["olga"])
    assert client_for(people["olga"]).get(f"/runs/{run}/").status_code == 200
    assert queries.get_run(people["fin"], run) is not None  # any logged-in user sees it, as before
    assert not queries.answerable(people["fin"]).filter(session_id=run).exists()
    assert queries.answerable(people["olga"]).filter(session_id=run).exists()


def test_the_cli_obeys_the_rules(transactional_db: None, start_run: Any) -> None:
    people = _rules()  # committed: the command reads through its own connections
    run = start_run(EXPENSE, BIG_EXPENSE, people["fin"])
    [question, *_] = pending(run)
    with pytest.raises(CommandError, match="olga may not start runs of 'expense_approval'"):
        call_command("wf", "start", EXPENSE, "--input", json.dumps(BIG_EXPENSE), "--user", "olga")
    with pytest.raises(CommandError, match="Unknown run"):
        call_command("wf", "show", run, "--user", "olga")
    with pytest.raises(CommandError):
        call_command(
            "wf", "answer", run, question.interrupt_id, "--answer", '{"approved": true}', "--user", "olga"
        )
    with pytest.raises(CommandError, match="Unknown run"):
        call_command("wf", "cancel", run, "--user", "olga")
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING
    out = StringIO()
    call_command("wf", "show", run, "--user", "audrey", stdout=out)
    assert json.loads(out.getvalue())["run"] == run


def test_the_admin_refuses_a_rule_for_an_unknown_workflow(people: dict[str, User]) -> None:
    root = User.objects.create_superuser("root", password="pw-root")
    client = Client()
    client.force_login(root)
    group = Group.objects.get(name="payables")
    response = client.post(
        "/admin/wfapp/workflowaccess/add/",
        {"workflow": "expense_aproval", "group": group.pk, "may_view": "on"},
    )
    assert response.status_code == 200
    assert "No registered workflow" in response.content.decode()
    assert WorkflowAccess.objects.count() == 2


# -- websockets and the API -----------------------------------------------------------------------


@pytest.fixture
async def async_people(transactional_db: None) -> dict[str, User]:
    return await sync_to_async(_rules)()


async def _start(user: User) -> str:
    from tests.web.test_consumers import start

    return await start(BIG_EXPENSE, user)


async def test_websockets_refuse_a_run_one_may_not_view(async_people: dict[str, User]) -> None:
    run = await _start(async_people["fin"])
    for name, allowed in (("olga", False), ("audrey", True)):
        cookie = await sync_to_async(_cookie)(async_people[name])
        comm = WebsocketCommunicator(application, f"/ws/runs/{run}/", headers=[ORIGIN, (b"cookie", cookie)])
        connected, _ = await comm.connect()
        assert connected is allowed, name
        await comm.disconnect()


async def test_the_inbox_socket_shows_only_what_one_may_answer(async_people: dict[str, User]) -> None:
    sockets = {}
    for name in ("olga", "fin"):
        cookie = await sync_to_async(_cookie)(async_people[name])
        comm = WebsocketCommunicator(application, "/ws/inbox/", headers=[ORIGIN, (b"cookie", cookie)])
        assert (await comm.connect())[0]
        await comm.send_to(text_data=json.dumps({"type": "hello", "watermark": 0}))
        await drain(comm)
        sockets[name] = comm
    await _start(async_people["fin"])
    seen = {name: await drain(comm) for name, comm in sockets.items()}
    assert "inbox-item" in seen["fin"]
    assert "inbox-item" not in seen["olga"]
    for comm in sockets.values():
        await comm.disconnect()


async def test_the_api_is_404_for_what_one_may_not_view(async_people: dict[str, User]) -> None:
    run = await _start(async_people["fin"])
    olga = Api(await sync_to_async(token_for)(async_people["olga"]))
    fin = Api(await sync_to_async(token_for)(async_people["fin"]))
    questions = (await fin.get("interrupts")).json()["items"]
    assert questions and all(q["workflow"] == EXPENSE for q in questions)
    question = questions[0]["id"]
    for path in (f"runs/{run}", f"runs/{run}/events", f"interrupts/{question}"):
        assert (await olga.get(path)).status_code == 404, path
    assert run not in json.dumps((await olga.get("runs")).json())
    assert (await olga.get("interrupts")).json()["count"] == 0
    answered = await olga.post(f"interrupts/{question}/answer", {"answer": {"approved": True}})
    assert answered.status_code == 404
    started = await olga.post(f"workflows/{EXPENSE}/runs", {"input": BIG_EXPENSE})
    assert started.status_code == 403
    assert (await fin.get(f"runs/{run}")).status_code == 200
