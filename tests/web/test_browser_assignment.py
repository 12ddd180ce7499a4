"""Issue 17 in real Chromium: an assigned question under "assigned to me", a quorum of two approvals."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, item, login, open_page, serving

PEOPLE = {"mia": "managers", "fred": "finance", "fiona": "finance"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("assignment"), "tests.wfapp.human_flows:assigned") as live:
        script = "from django.contrib.auth.models import Group, Permission, User\n" + "".join(
            f"u = User.objects.create_user({name!r}, password='pw-{name}')\n"
            "u.user_permissions.add(*Permission.objects.filter(codename__in=['answer_interrupt', 'start_run']))\n"
            f"u.groups.add(Group.objects.get(name={group!r}))\n"
            for name, group in PEOPLE.items()
        )
        live.manage("shell", "-c", script)
        yield live


def test_an_assigned_user_sees_the_question_under_assigned_to_me(browser: Browser, server: Server) -> None:
    server.start_run("assigned", {"assignees": ["fred"], "what": "the fred-only report"})
    fred, mia = login(browser, server, "fred"), login(browser, server, "mia")
    page = open_page(fred, "/")
    page.get_by_role("link", name="Assigned to me").click()
    page.wait_for_url("**/?tab=mine*")
    card = item(page, "the fred-only report")
    expect(card).to_be_visible()
    expect(card).to_contain_text("For fred")
    card.get_by_role("button", name="Claim").click()
    expect(item(page, "the fred-only report")).to_contain_text("Claimed by fred")

    theirs = open_page(mia, "/?tab=mine")
    expect(theirs.locator("#inbox-items")).not_to_contain_text("the fred-only report")
    everything = open_page(mia, "/")
    expect(item(everything, "the fred-only report")).to_contain_text("Claimed by fred")  # still visible
    fred.close()
    mia.close()


def test_a_quorum_question_collects_two_approvals(browser: Browser, server: Server) -> None:
    expense = {"employee": "Cy", "amount": 25000, "category": "equipment", "description": "Racks"}
    run = server.start_run("expense_approval", expense)["run"]
    fred, fiona = login(browser, server, "fred"), login(browser, server, "fiona")
    page = open_page(fred, "/?tab=groups")
    card = item(page, "Finance approval: Cy")
    expect(card).to_contain_text("0 of 2 approvals")
    card.get_by_role("button", name="Approve").click()
    expect(item(page, "Finance approval: Cy")).to_contain_text("1 of 2 approvals: fred")

    other = open_page(fiona, "/?tab=groups")
    second = item(other, "Finance approval: Cy")
    expect(second).to_contain_text("1 of 2 approvals: fred")
    second.get_by_role("button", name="Approve").click()
    expect(other.locator(".inbox-item.answered", has_text="Finance approval: Cy")).to_contain_text(
        "Answered by fiona"
    )
    shown = server.manage("wf", "show", run)
    assert '"actor": "fred"' in shown and '"actor": "fiona"' in shown
    fred.close()
    fiona.close()
