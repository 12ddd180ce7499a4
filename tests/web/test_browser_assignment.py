"""Issue 17 in real Chromium: an assigned question under "assigned to me", a quorum of two
approvals, claims and approvals seen live by others, a bulk rejection with its reason."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, item, login, open_page, serving

PEOPLE = {"mia": "managers", "fred": "finance", "fiona": "finance"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("assignment"), "tests.wfapp.human_flows:assigned") as live:
        live.add_people(PEOPLE)
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
    expect(item(page, "the fred-only report")).to_contain_text("You hold this")

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


def test_a_claim_and_an_approval_reach_the_other_users_open_pages_live(
    browser: Browser, server: Server
) -> None:
    shared = server.start_run("assigned", {"assignees": ["group:finance"], "what": "the shared report"})[
        "run"
    ]
    expense = {"employee": "Dee", "amount": 30000, "category": "equipment", "description": "Servers"}
    server.start_run("expense_approval", expense)
    fred, fiona = login(browser, server, "fred"), login(browser, server, "fiona")
    mine, theirs = open_page(fred, "/"), open_page(fiona, "/")
    card = item(theirs, "the shared report")
    question = open_page(fiona, f"/interrupts/{card.get_attribute('id').removeprefix('interrupt-')}/")
    run_page = open_page(fiona, f"/runs/{shared}/")
    card.get_by_label("Comment").fill("half typed")

    item(mine, "the shared report").get_by_role("button", name="Claim").click()
    expect(item(mine, "the shared report")).to_contain_text("You hold this")
    for other in (card, item(question, "the shared report"), item(run_page, "the shared report")):
        # fiona's pages show it without a reload
        expect(other).to_contain_text("Claimed by fred")
        expect(other.get_by_role("button", name="Claim")).to_have_count(0)
    expect(card.get_by_label("Comment")).to_have_value("half typed")  # only the human steps changed

    item(mine, "the shared report").get_by_role("button", name="Release").click()
    expect(card.get_by_role("button", name="Claim")).to_be_visible()
    expect(card).not_to_contain_text("Claimed by")

    finance = item(theirs, "Finance approval: Dee")
    expect(finance).to_contain_text("0 of 2 approvals")
    item(mine, "Finance approval: Dee").get_by_role("button", name="Approve").click()
    expect(item(mine, "Finance approval: Dee")).to_contain_text("1 of 2 approvals: fred")
    expect(finance).to_contain_text("1 of 2 approvals: fred")
    fred.close()
    fiona.close()


def test_a_bulk_rejection_needs_its_reason_and_carries_it(browser: Browser, server: Server) -> None:
    for employee in ("Eve", "Eli"):
        spend = {"employee": employee, "amount": 1500, "category": "travel", "description": "Trains"}
        server.start_run("expense_approval", spend)
    mia = login(browser, server, "mia")
    inbox = open_page(mia, "/?tab=groups")
    for employee in ("Eve", "Eli"):
        item(inbox, f"Manager approval: {employee}").locator(".bulk-select input").check()
    inbox.get_by_role("button", name="Reject selected").click()
    expect(inbox.locator("#bulk-results")).to_contain_text("Rejecting these needs a reason")
    expect(item(inbox, "Manager approval: Eve")).to_be_visible()  # nothing was answered

    inbox.get_by_label("Reason for rejecting them").fill("No receipts")
    inbox.get_by_role("button", name="Reject selected").click()
    expect(inbox.locator("#bulk-results li.ok")).to_have_count(2)
    for employee in ("Eve", "Eli"):
        closed = inbox.locator(".inbox-item.answered", has_text=f"Manager approval: {employee}")
        expect(closed).to_contain_text("Answered by mia")
        expect(closed).to_contain_text("No receipts")
    mia.close()
