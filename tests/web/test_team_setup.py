"""Team set-up an administrator does from the pages (issue 27, item 11), and `make run`'s demo
users (item 12): the demo's groups hold the permissions, a new manager answers; access rules
pick their workflow from a list and say what the first rule does; the workflow's page says who
answers which question; WFAPP_DEMO_PASSWORD on a later start resets the demo users' password."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import Group, User
from django.core.management import call_command

from tests.web.conftest import client_for, pending
from wfapp.demos import expense_approval_people as people
from wfapp.models import InterruptStatus, WorkflowAccess

SMALL = {"employee": "Ned", "amount": 300, "category": "meals", "description": "Team lunch"}


@pytest.fixture
def data_dir(settings: Any, tmp_path: Path) -> Path:
    settings.DATA_DIR = tmp_path
    return tmp_path


def test_a_new_manager_added_to_managers_answers(db: None, data_dir: Path, start_run: Any) -> None:
    call_command("seed_demo")
    assert not User.objects.get(username="mia").user_permissions.exists()  # the group holds them
    max_ = User.objects.create_user("max", password="pw-max")
    max_.groups.add(Group.objects.get(name="managers"))  # what the admin's user page does
    run = start_run("expense_approval", SMALL)
    [question] = pending(run)
    response = client_for(User.objects.get(pk=max_.pk)).post(
        f"/interrupts/{question.pk}/answer/", {"f.approved": "true"}
    )
    assert response.status_code in (200, 302), response.content
    question.refresh_from_db()
    assert question.status == InterruptStatus.ANSWERED and question.answered_by == "max"


def test_make_run_says_who_the_demo_users_are_and_a_later_password_resets_them(
    db: None, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("WFAPP_DEMO_PASSWORD", raising=False)
    call_command("seed_demo")
    kept = people.password_file()
    assert kept.parent == data_dir and oct(kept.stat().st_mode & 0o777) == "0o600"
    password = kept.read_text().strip()
    assert User.objects.get(username="fred").check_password(password)
    [users, admin] = people.login_lines()
    assert users.startswith("Demo users: mia (managers), fred (finance), fiona (finance), dora (directors)")
    assert str(kept) in users and "admin" in admin

    monkeypatch.setenv("WFAPP_DEMO_PASSWORD", "chosen-later")
    call_command("seed_demo")  # a later start
    assert all(user.check_password("chosen-later") for user in User.objects.filter(username__in=people.USERS))
    assert not kept.exists()  # it no longer holds their password
    assert "WFAPP_DEMO_PASSWORD" in people.login_lines()[0]


def _admin() -> Any:
    return client_for(User.objects.create_superuser("root", password="pw-root"))


def test_an_access_rule_picks_its_workflow_from_a_list_and_says_what_the_first_rule_does(db: None) -> None:
    admin = _admin()
    page = admin.get("/admin/wfapp/workflowaccess/add/").content.decode()
    select = page[page.index('<select name="workflow"') :]
    select = select[: select.index("</select>")]
    for name in ("expense_approval", "document_review", "batch_review", "support_triage"):
        assert f'<option value="{name}">{name}</option>' in select
    assert "Its first rule restricts it" in page and "everyone else" in page

    managers = Group.objects.get(name="managers")
    rule = {"workflow": "batch_review", "group": managers.pk, "may_answer": "on", "may_view": "on"}
    saved = admin.post("/admin/wfapp/workflowaccess/add/", rule, follow=True).content.decode()
    assert "This is the first rule on batch_review" in saved and "everyone else" in saved
    finance = {**rule, "group": Group.objects.get(name="finance").pk}
    second = admin.post("/admin/wfapp/workflowaccess/add/", finance, follow=True).content.decode()
    assert "first rule" not in second


def test_the_admin_says_wfapp_administration_and_calls_runs_runs(db: None) -> None:
    index = _admin().get("/admin/").content.decode()
    assert "wfapp administration" in index and "Django administration" not in index
    assert ">Runs</a>" in index and ">Sessions</a>" not in index


def test_the_workflows_page_says_which_group_answers_which_question(db: None, start_run: Any) -> None:
    root = _admin()
    before = root.get("/workflows/expense_approval/").content.decode()
    assert "No run has asked a question yet" in before
    start_run("expense_approval", {**SMALL, "amount": 20000})  # the manager and a finance quorum
    page = root.get("/workflows/expense_approval/").content.decode()
    table = page[
        page.index('id="who-answers-steps"') : page.index("</table>", page.index("who-answers-steps"))
    ]
    rows = [row for row in table.split("<tr>")[2:]]
    assert [row.split("</td>")[0].rsplit(">", 1)[1] for row in rows] == [
        "finance_approval",
        "manager_approval",
    ]
    assert "group finance" in rows[0] and "<td>2</td>" in rows[0]
    assert "group managers" in rows[1] and "group directors" in rows[1]  # its escalation
    assert "No access rule" in page
    WorkflowAccess.objects.create(
        workflow="expense_approval", group=Group.objects.get(name="finance"), may_answer=True
    )
    assert "<strong>finance</strong> may answer" in root.get("/workflows/expense_approval/").content.decode()
