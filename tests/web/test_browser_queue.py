"""Issue 27, items 5, 7 and 8 in real Chromium: the inbox's list view (a line per question, its
card opening beside it, sorted by a column, remembered, live), runs you can recognise (a summary
from the input, an outcome from the output) and times in the viewer's zone."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, expense, item, login, open_page, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-queue")) as live:
        yield live


def _answer(server: Server, run: str, approved: bool) -> None:
    decision = '{"approved": true}' if approved else '{"approved": false, "comment": "No"}'
    server.manage("wf", "answer", run, "manager-approval", "--answer", decision, "--user", "olga")


def test_a_run_reads_as_its_summary_and_ends_with_an_outcome(browser: Browser, server: Server) -> None:
    run = expense(server, "Ana", amount=700)
    olga = login(browser, server, "olga")
    inbox = open_page(olga, "/?q=Ana")
    expect(item(inbox, "Ana").locator(".run-summary")).to_have_text("Ana: 700.00 travel")

    _answer(server, run, approved=False)
    page = open_page(olga, f"/runs/{run}/")
    expect(page).to_have_title(re.compile(r"^Ana: 700\.00 travel"))
    expect(page.locator("#run-summary")).to_have_text("Ana: 700.00 travel")
    expect(page.locator("#run-outcome")).to_have_text("rejected")

    runs = open_page(olga, "/runs/?text=700.00")  # the summary's words: the input says 700
    row = runs.locator(f"#run-row-{run}")
    expect(row).to_contain_text("Ana: 700.00 travel")
    expect(row).to_contain_text("rejected")
    olga.close()


def test_times_are_the_viewers_with_utc_on_hover_and_due_dates_say_how_far(
    browser: Browser, server: Server
) -> None:
    expense(server, "Ben", amount=600)
    york = login(browser, server, "olga", timezone_id="America/New_York", locale="en-US")
    open_page(york, "/").close()  # a first page tells the server the zone (a cookie)
    inbox = open_page(york, "/?q=Ben")
    due = item(inbox, "Ben").locator("time.due")
    expect(due).to_contain_text(re.compile(r"Due \d{4}-\d\d-\d\d \d\d:\d\d E[SD]T \(in [45]\xa0days\)"))
    expect(due).to_have_attribute("title", re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$"))

    runs = open_page(york, "/runs/?text=ben")
    expect(runs.locator("#runs-from")).to_have_attribute("placeholder", "01/31/2026")
    runs.locator("#runs-from").fill("12/31/2099")  # as an American writes the last day of 2099
    runs.locator("#runs-from").press("Enter")
    expect(runs.locator("#runs-problems")).to_have_count(0)
    expect(runs.locator("#runs-body tr")).to_have_count(0)
    runs.locator("#runs-from").fill("01/31/2020")
    runs.locator("#runs-from").press("Enter")
    expect(runs.locator("#runs-body tr", has_text="Ben")).to_have_count(1)
    york.close()


def test_the_list_view_a_line_per_question_its_card_beside_sorted_remembered_and_live(
    browser: Browser, server: Server
) -> None:
    expense(server, "Cleo", amount=800)
    olga = login(browser, server, "olga")
    page = open_page(olga, "/?q=Cleo&view=list")
    line = page.locator(".row-line", has_text="Cleo: 800.00 travel")
    expect(line).to_be_visible()
    expect(line.locator(".assignee")).to_have_text("Managers")  # not group:managers
    expect(line.locator(".due")).to_have_text(re.compile(r"in [45]\xa0days"))
    expect(line.locator(".age")).to_have_text("just now")
    card = page.locator(".inbox-item", has=line)
    expect(card.get_by_role("button", name="Approve")).to_be_hidden()
    line.click()
    expect(card.get_by_role("button", name="Approve")).to_be_visible()
    expect(card.locator("header .step")).to_have_text("Manager review")  # words, not a path
    expect(card.locator("header")).not_to_contain_text("@1")

    page.locator("#inbox-list-head").get_by_role("link", name="Due").click()
    expect(page.locator("#inbox-subtitle")).to_contain_text("soonest due first")
    expect(page.locator("#inbox-items")).to_have_class(re.compile("as-list"))
    page.get_by_label("Sort").select_option("assignee")  # the filters' select: the list is swapped
    expect(page.locator("#inbox-subtitle")).to_contain_text("by assignee")
    expect(page.locator("#inbox-list-head a[aria-current]")).to_have_text("Assignee")
    expect(page).to_have_url(re.compile(r"sort=assignee.*view=list|view=list.*sort=assignee"))

    again = open_page(olga, "/?q=Cleo")  # no view asked for: the one chosen last
    expect(again.locator("#view-list")).to_have_attribute("aria-current", "page")
    run = expense(server, "Cleo", amount=900)  # arrives live, as a line
    expect(again.locator(".row-line", has_text="Cleo: 900.00 travel")).to_be_visible()
    _answer(server, run, approved=True)
    expect(again.locator(".row-line", has_text="Cleo: 900.00 travel")).to_have_count(0)
    olga.close()


def test_a_card_writes_numbers_the_viewers_way_and_a_markdown_draft_as_safe_formatted_text(
    browser: Browser, server: Server
) -> None:
    expense(server, "Dora", amount=2300)
    server.start_run(
        "document_review", {"title": "Plan <b>B</b>", "topic": "<img src=x onerror=alert(1)> racks"}
    )
    berlin = login(browser, server, "olga", locale="de-DE")
    page = open_page(berlin, "/?q=Dora")
    amount = item(page, "Manager approval: Dora").locator("dd [data-number]").first
    expect(amount).to_have_text("2.300")  # as a German reader writes 2,300

    page = open_page(berlin, "/?workflow=document_review")
    draft = item(page, "Review round 1").locator("dd .markdown")
    expect(draft.locator("h1")).to_have_text("Plan <b>B</b>")  # a heading; its HTML shown as text
    expect(draft).to_contain_text("<img src=x onerror=alert(1)> racks")
    expect(draft.locator("img, b, script")).to_have_count(0)
    berlin.close()
