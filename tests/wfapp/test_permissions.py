"""Starting, answering, cancelling and retrying each need their own permission, everywhere."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import Group, Permission, User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from tests.wfapp.helpers import settled
from wfapp.errors import NotPermitted, WfappError
from wfapp.human import permissions
from wfapp.models import AnswerAttempt, Event, Session
from wfapp.runs import answering, interventions, starting
from wfapp.runs.runtime import Runtime

ACTIONS = ("start_run", "cancel_run", "retry_run")


def _with(username: str, *codenames: str) -> User:
    user = User.objects.create_user(username=username, password="pw-" + username)
    user.user_permissions.add(
        *Permission.objects.filter(content_type__app_label="wfapp", codename__in=codenames)
    )
    return User.objects.get(pk=user.pk)


def test_each_action_has_its_own_permission(transactional_db: None) -> None:
    run = Session.objects.create(id="r1", workflow="approval")
    starter = _with("starter", "start_run")
    canceller = _with("canceller", "cancel_run")
    retrier = _with("retrier", "retry_run")
    answerer = _with("answerer", "answer_interrupt")
    table = {
        user.username: (
            permissions.can_start(user, "approval"),
            permissions.can_answer(user),
            permissions.can_cancel(user, run),
            permissions.can_retry(user, run),
        )
        for user in (starter, canceller, retrier, answerer)
    }
    assert table == {
        "starter": (True, False, False, False),
        "canceller": (False, False, True, False),
        "retrier": (False, False, False, True),
        "answerer": (False, True, False, False),
    }
    assert issubclass(NotPermitted, WfappError)


def test_the_ensure_admin_superuser_may_do_everything(transactional_db: None, monkeypatch) -> None:
    monkeypatch.setenv("WFAPP_ADMIN_USER", "root")
    monkeypatch.setenv("WFAPP_ADMIN_PASSWORD", "a long admin password")
    call_command("ensure_admin", stdout=StringIO())
    root = User.objects.get(username="root")
    run = Session.objects.create(id="r2", workflow="approval")
    assert permissions.can_start(root, "approval") and permissions.can_answer(root)
    assert permissions.can_cancel(root, run) and permissions.can_retry(root, run)


def test_anonymous_and_none_may_do_nothing(transactional_db: None) -> None:
    from django.contrib.auth.models import AnonymousUser

    run = Session.objects.create(id="r3", workflow="approval")
    for nobody in (None, AnonymousUser()):
        assert not permissions.can_start(nobody, "approval")
        assert not permissions.can_answer(nobody)
        assert not permissions.can_cancel(nobody, run)
        assert not permissions.can_retry(nobody, run)


async def test_start_without_the_permission_writes_nothing(engine_runtime: Runtime) -> None:
    vera = await sync_to_async(_with)("vera", "answer_interrupt", "cancel_run", "retry_run")
    with pytest.raises(NotPermitted, match="vera may not start runs of 'approval'"):
        await starting.start_run("approval", {"n": 1}, user=vera)
    assert await Session.objects.acount() == 0
    starter = await sync_to_async(_with)("sam", "start_run")
    session_id = await starting.start_run("approval", {"n": 1}, user=starter)
    assert (await settled(session_id, "waiting")).created_by_id == starter.pk
    trusted = await starting.start_run("approval", {"n": 2})  # user=None: the system itself
    await settled(trusted, "waiting")


async def test_cancel_without_the_permission_leaves_the_run_alone(engine_runtime: Runtime) -> None:
    session_id = await starting.start_run("approval", {"n": 1})
    await settled(session_id, "waiting")
    vera = await sync_to_async(_with)("vera", "answer_interrupt", "start_run", "retry_run")
    events = await Event.objects.filter(session_id=session_id).acount()
    with pytest.raises(NotPermitted, match="vera may not cancel runs"):
        await interventions.cancel_run(session_id, user=vera)
    assert (await Session.objects.aget(pk=session_id)).status == "waiting"
    assert await Event.objects.filter(session_id=session_id).acount() == events
    canceller = await sync_to_async(_with)("cid", "cancel_run")
    await interventions.cancel_run(session_id, user=canceller)
    assert (await settled(session_id, "cancelled")).status == "cancelled"


async def test_retry_without_the_permission_is_refused(engine_runtime: Runtime, test_dir) -> None:
    session_id = await starting.start_run("flaky", {"n": 1})
    await settled(session_id, "failed")
    vera = await sync_to_async(_with)("vera", "answer_interrupt", "start_run", "cancel_run")
    with pytest.raises(NotPermitted, match="vera may not retry runs"):
        await interventions.retry_run(session_id, user=vera)
    with pytest.raises(NotPermitted):
        await interventions.check_retry(session_id, user=vera)
    assert (await Session.objects.aget(pk=session_id)).status == "failed"
    retrier = await sync_to_async(_with)("rita", "retry_run")
    await interventions.check_retry(session_id, user=retrier)  # allowed: no error


async def test_answer_without_the_permission_is_refused(engine_runtime: Runtime) -> None:
    session_id = await starting.start_run("approval", {"n": 1})
    await settled(session_id, "waiting")
    starter = await sync_to_async(_with)("sam", *ACTIONS)
    with pytest.raises(NotPermitted, match="sam may not answer interrupts"):
        await answering.answer_interrupt(session_id, "ok", {"approved": True}, user=starter)
    assert (await Session.objects.aget(pk=session_id)).status == "waiting"
    assert await Event.objects.filter(session_id=session_id, kind="answer").acount() == 0
    assert [a.outcome async for a in AnswerAttempt.objects.filter(session_id=session_id)] == ["forbidden"]


def test_cli_enforces_the_user_it_names(queue_worker: None, transactional_db: None, workflows: None) -> None:
    _with("vera", "answer_interrupt")
    with pytest.raises(CommandError, match="vera may not start runs of 'approval'"):
        call_command("wf", "start", "approval", "--input", '{"n": 1}', "--user", "vera", stdout=StringIO())
    assert Session.objects.count() == 0
    out = StringIO()
    call_command("wf", "start", "approval", "--input", '{"n": 1}', stdout=out)  # no --user: trusted
    run = json.loads(out.getvalue())["run"]
    with pytest.raises(CommandError, match="vera may not cancel runs"):
        call_command("wf", "cancel", run, "--user", "vera", stdout=StringIO())
    with pytest.raises(CommandError, match="vera may not retry runs"):
        call_command("wf", "retry", run, "--user", "vera", stdout=StringIO())
    assert Session.objects.get(pk=run).status == "waiting"


def _migrate(target: list[tuple[str, str]]) -> None:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(target)


def test_upgrading_grants_the_new_permissions_to_those_who_could_answer(transactional_db: None) -> None:
    _migrate([("wfapp", "0005_interrupt_run_status_index")])
    answer = Permission.objects.get(content_type__app_label="wfapp", codename="answer_interrupt")
    operators = Group.objects.create(name="operators")
    operators.permissions.add(answer)
    olga = User.objects.create_user("olga")
    olga.user_permissions.add(answer)
    vera = User.objects.create_user("vera")  # logged in, could start and cancel until now
    in_group = User.objects.create_user("gus")
    in_group.groups.add(operators)

    _migrate([("wfapp", "0006_run_action_permissions")])
    _migrate(MigrationExecutor(connection).loader.graph.leaf_nodes("wfapp"))  # and on to the latest

    granted = set(operators.permissions.filter(codename__in=ACTIONS).values_list("codename", flat=True))
    assert granted == set(ACTIONS)
    run = Session.objects.create(id="r9", workflow="approval")
    for user, allowed in ((olga, True), (in_group, True), (vera, False)):
        fresh = User.objects.get(pk=user.pk)
        assert permissions.can_start(fresh, "approval") is allowed
        assert permissions.can_cancel(fresh, run) is allowed
        assert permissions.can_retry(fresh, run) is allowed


def test_the_admin_offers_cancel_and_retry_only_with_their_permissions(
    transactional_db: None, workflows: None
) -> None:
    from asgiref.sync import async_to_sync
    from django.test import Client

    session_id, _ = async_to_sync(starting.create_run)("approval", {"n": 1})
    staff = _with("stan", "view_session")
    User.objects.filter(pk=staff.pk).update(is_staff=True)
    client = Client()
    client.force_login(staff)
    listing = client.get("/admin/wfapp/session/").content.decode()
    assert 'value="cancel_runs"' not in listing and 'value="retry_runs"' not in listing
    action = {"action": "cancel_runs", "_selected_action": [session_id]}
    client.post("/admin/wfapp/session/", action, follow=True)
    assert Session.objects.get(pk=session_id).status == "running"
    staff.user_permissions.add(Permission.objects.get(content_type__app_label="wfapp", codename="cancel_run"))
    listing = client.get("/admin/wfapp/session/").content.decode()
    assert 'value="cancel_runs"' in listing and 'value="retry_runs"' not in listing
    client.post("/admin/wfapp/session/", action, follow=True)
    assert Session.objects.get(pk=session_id).status == "cancelled"
