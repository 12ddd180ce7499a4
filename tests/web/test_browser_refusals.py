"""Issue 27 in real Chromium: a question the user may not answer says why instead of offering
buttons; a refusal that comes back from the server shows in the card, by mouse or by key; and the
forms a live update re-renders (the question page's Reassign, Release) keep working."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, item, login, open_page, serving

PEOPLE = {"mia": "managers", "fred": "finance", "fiona": "finance", "rita": "finance"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("refusals"), "tests.wfapp.human_flows:assigned") as live:
        live.add_people(PEOPLE, reassigners=("rita",))
        yield live


def _big_expense(server: Server, employee: str) -> None:
    """An expense finance decides with two approvals."""
    spend = {"employee": employee, "amount": 25000, "category": "equipment", "description": "Racks"}
    server.start_run("expense_approval", spend)


def test_another_groups_question_says_why_instead_of_offering_buttons(
    browser: Browser, server: Server
) -> None:
    server.start_run("assigned", {"assignees": ["group:finance"], "what": "the finance-only report"})
    mia = login(browser, server, "mia")
    page = open_page(mia, "/?q=finance-only")
    card = item(page, "the finance-only report")
    expect(card.locator(".refusal")).to_have_text("Assigned to finance: you cannot answer it.")
    expect(card.get_by_role("button", name="Approve")).to_have_count(0)
    expect(card.locator(".bulk-select")).to_have_count(0)
    page.keyboard.press("j")
    page.keyboard.press("a")
    expect(page.locator("#keys-status")).to_have_text(
        "Not yours to answer: Assigned to finance: you cannot answer it."
    )
    mia.close()


def test_an_approver_of_a_quorum_reads_that_it_waits_for_one_more(browser: Browser, server: Server) -> None:
    _big_expense(server, "Ada")
    fred = login(browser, server, "fred")
    page = open_page(fred, "/?q=Ada")
    item(page, "Finance approval: Ada").get_by_role("button", name="Approve").click()
    card = item(page, "Finance approval: Ada")
    expect(card.locator(".refusal")).to_have_text("You approved; waiting for 1 more approval.")
    expect(card.get_by_role("button", name="Approve")).to_have_count(0)
    page.reload()
    expect(item(page, "Finance approval: Ada").locator(".refusal")).to_contain_text("waiting for 1 more")
    fred.close()


def test_a_refusal_after_the_page_loaded_shows_in_the_card(browser: Browser, server: Server) -> None:
    """fiona's card offered Approve; fred claims it meanwhile; her answer (by key, then by click)
    is refused, and the card says why instead of looking accepted."""
    _big_expense(server, "Gus")
    fred, fiona = login(browser, server, "fred"), login(browser, server, "fiona")
    theirs = open_page(fiona, "/?q=Gus")
    mine = open_page(fred, "/?q=Gus")
    item(mine, "Finance approval: Gus").get_by_role("button", name="Claim").click()
    card = item(theirs, "Finance approval: Gus")
    expect(card).to_contain_text("Claimed by fred")  # live; the form is still the one she loaded

    card.locator(".bulk-select input").focus()  # on the card, as j would put her
    theirs.keyboard.press("a")
    expect(card.get_by_role("alert")).to_have_text("fiona may not answer: this question is claimed by fred")
    expect(theirs.locator("#keys-status")).to_have_text(
        "Not sent: fiona may not answer: this question is claimed by fred"
    )
    card.get_by_role("button", name="Approve").click()
    expect(card.get_by_role("alert")).to_have_count(1)
    expect(card).to_contain_text("0 of 2 approvals")  # nothing was recorded
    fred.close()
    fiona.close()


def test_the_question_pages_forms_work_after_a_live_update(browser: Browser, server: Server) -> None:
    """Claim, Release and Reassign on rita's question page, each as a live update rendered it."""
    server.start_run("assigned", {"assignees": ["group:finance"], "what": "the reassigned report"})
    fred, rita = login(browser, server, "fred"), login(browser, server, "rita")
    inbox = open_page(fred, "/?q=reassigned")
    theirs = item(inbox, "the reassigned report")
    pk = theirs.get_attribute("id").removeprefix("interrupt-")
    question = open_page(rita, f"/interrupts/{pk}/")
    card = item(question, "the reassigned report")
    actions = f"#interrupt-{pk}-actions"

    def live(button: str, shows: str) -> None:
        """fred clicks `button` on his card; rita's card shows `shows`, in a new live-rendered part."""
        question.eval_on_selector(actions, "el => { el.dataset.seen = '1'; }")
        theirs.get_by_role("button", name=button).click()
        expect(card).to_contain_text(shows)
        question.wait_for_function(f"() => !document.querySelector({actions!r}).dataset.seen")

    live("Claim", "Claimed by fred")
    live("Release", "Claim")
    expect(card).not_to_contain_text("Claimed by fred")
    card.get_by_role("button", name="Claim").click()  # the form the live update rendered
    expect(card).to_contain_text("You hold this")
    card.get_by_role("button", name="Release").click()
    expect(card.get_by_role("button", name="Claim")).to_be_visible()

    live("Claim", "Claimed by fred")
    card.get_by_label("Reassign to").fill("mia")  # a plain form: it needs its CSRF token
    card.get_by_role("button", name="Reassign").click()
    expect(question).to_have_url(server.url + "/")  # done: back to the inbox, not a CSRF failure page
    expect(question).to_have_title("Inbox · wfapp")
    question.goto(f"/interrupts/{pk}/")
    expect(item(question, "the reassigned report")).to_contain_text("For mia")
    fred.close()
    rita.close()
