"""Decision integrity in real Chromium (issue 24, item 10; issue 27, items 3, 4 and 6): a run's
requester reads why they may not approve it; a failed run's question says the run failed instead
of offering buttons; an answer over someone else's claim asks to confirm it, and its holder sees
who answered over it; a quorum's answers read as a sentence, and an approver is offered nothing more."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, expense, item, login, open_page, serving

PEOPLE = {"mia": "managers", "max": "managers", "fred": "finance", "fiona": "finance", "rita": "managers"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("integrity"), "tests.web.flows:pay_beside_ledger") as live:
        live.add_people(PEOPLE, reassigners=("rita",))
        yield live


def test_the_requester_reads_why_they_may_not_approve_their_own_claim(
    browser: Browser, server: Server
) -> None:
    expense(server, "Mia's own trip", user="mia")  # mia files it; a manager decides
    mia = login(browser, server, "mia")
    page = open_page(mia, "/?q=Mia's own trip")
    card = item(page, "Mia's own trip")
    expect(card.locator(".refusal")).to_have_text("You started this run, so someone else approves it.")
    expect(card.get_by_role("button", name="Approve")).to_have_count(0)
    expect(card.locator(".bulk-select")).to_have_count(0)
    mia.close()
    max_ = login(browser, server, "max")  # another manager decides it
    theirs = item(open_page(max_, "/?q=Mia's own trip"), "Mia's own trip")
    expect(theirs.get_by_role("button", name="Approve")).to_be_visible()
    max_.close()


def test_a_failed_runs_question_says_the_run_failed(browser: Browser, server: Server, tmp_path: Path) -> None:
    server.start_run("web_pay_beside_ledger", {"what": "invoice 88", "unlock_file": str(tmp_path / "open")})
    fred = login(browser, server, "fred")
    card = item(open_page(fred, "/?q=invoice 88"), "Pay invoice 88?")
    expect(card.locator(".refusal")).to_have_text(
        "The run failed at web_pay_beside_ledger@1/book_payment@1; retry it first: this question waits until then."
    )
    expect(card.get_by_role("button", name="Approve")).to_have_count(0)
    fred.close()


def test_an_answer_over_a_claim_asks_first_and_its_holder_sees_it(browser: Browser, server: Server) -> None:
    expense(server, "Claimed trip")
    mia, rita = login(browser, server, "mia"), login(browser, server, "rita")
    theirs = open_page(rita, "/?q=Claimed trip")  # open before mia claims it
    card = item(theirs, "Claimed trip")
    expect(card.locator(".override-claim")).to_have_count(0)
    mine = open_page(mia, "/?q=Claimed trip")
    item(mine, "Claimed trip").get_by_role("button", name="Claim").click()
    expect(item(mine, "Claimed trip")).to_contain_text("You hold this")

    expect(card.locator(".override-claim")).to_contain_text("mia holds this: answer anyway?")  # live
    card.get_by_role("button", name="Approve").click()
    expect(card.get_by_role("alert")).to_contain_text("mia holds this: answer anyway?")
    card.get_by_label("Answer over mia's claim").check()
    card.get_by_role("button", name="Approve").click()
    answered = theirs.locator(".inbox-item.answered", has_text="Claimed trip")
    expect(answered).to_contain_text("Answered by rita over mia's claim")

    held = mine.locator(".inbox-item.answered", has_text="Claimed trip")  # live, on the holder's page
    expect(held).to_contain_text("Answered by rita over mia's claim")
    mia.close()
    rita.close()


def test_a_quorum_reads_as_a_sentence(browser: Browser, server: Server) -> None:
    big = {"employee": "Quinn", "amount": 25000, "category": "equipment", "description": "Racks"}
    run = str(server.start_run("expense_approval", big)["run"])
    fred = login(browser, server, "fred")
    page = open_page(fred, "/?q=Quinn")
    card = item(page, "Finance approval: Quinn")
    pk = str(card.get_attribute("id")).removeprefix("interrupt-")
    card.get_by_role("button", name="Approve").click()
    card = item(page, "Finance approval: Quinn")
    expect(card.locator(".refusal")).to_have_text("You approved; waiting for 1 more approval.")
    expect(card.get_by_role("button")).to_have_count(0)  # nothing more to do: no answer, no claim
    server.answer(run, "finance-approval", {"approved": True, "comment": "racks are due"}, "fiona")

    question = open_page(fred, f"/interrupts/{pk}/")
    expect(question.locator(".closed-status")).to_contain_text(
        "Approved by fred and fiona (fiona — Comment: racks are due)"
    )
    server.answer(run, "manager-approval", {"approved": True}, "mia")
    timeline = open_page(fred, f"/runs/{run}/").locator("#timeline")
    expect(timeline).to_contain_text(  # what the join hands on: both decisions, in words
        "Finance approval: Approved by fred and fiona (fiona — Comment: racks are due)"
    )
    said = timeline.locator("summary", has_text="Finance approval: Approved by fred and fiona")
    expect(said).to_have_count(1)  # the line itself reads so (its JSON is folded under "As JSON")
    fred.close()
