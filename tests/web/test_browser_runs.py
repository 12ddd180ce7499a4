"""Run actions in real Chromium: a failed run retried after the cause is fixed, a run cancelled.

Same serving subprocess as `test_browser.py`, with one extra workflow registered that fails
until a file exists, so the retry is a real second attempt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import PHONE, Server, expense, login, open_page, phone, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-runs"), "tests.web.flows:locked_ledger") as live:
        yield live


def test_a_failed_run_is_retried_from_its_page(browser: Browser, server: Server, tmp_path: Path) -> None:
    unlock = tmp_path / "unlock"
    context = login(browser, server, "olga")
    page = open_page(context, "/workflows/web_locked_ledger/")
    page.get_by_label("Input").fill(f'{{"unlock_file": "{unlock}"}}')
    page.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    expect(page.locator("#run-status")).to_have_text("failed")
    expect(page.locator("#run-result")).to_contain_text("the ledger is locked")
    expect(page.locator('[data-node="post_to_ledger"]')).to_have_attribute("data-status", "failed")

    unlock.touch()  # the operator fixes the cause, then retries
    page.get_by_role("button", name="Retry failed nodes").click()
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#run-output")).to_contain_text("Posted")
    expect(page.locator('[data-node="post_to_ledger"]')).to_have_attribute("data-status", "completed")
    expect(page.get_by_role("button", name="Retry failed nodes")).to_have_count(0)
    context.close()


def test_a_waiting_run_is_cancelled_and_leaves_the_inbox(browser: Browser, server: Server) -> None:
    server.start_run(
        "expense_approval", {"employee": "Cato", "amount": 300, "category": "other", "description": "Desk"}
    )
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?q=Cato")
    expect(inbox.locator(".inbox-item")).to_have_count(1)
    inbox.locator(".inbox-item").get_by_role("link", name="run").click()
    page = inbox
    page.wait_for_url("**/runs/*/")
    page.once("dialog", lambda dialog: dialog.accept())
    # The live update may show "cancelled" first; the answer to the POST then reloads the page.
    # Wait for that reload, or it would abort the navigation below.
    with page.expect_navigation():
        page.get_by_role("button", name="Cancel run").click()
    expect(page.locator("#run-status")).to_have_text("cancelled")
    expect(page.locator("#run-result")).to_contain_text("This run was cancelled.")
    expect(page.get_by_role("button", name="Cancel run")).to_have_count(0)
    page.goto("/?q=Cato")
    expect(page.locator("#inbox-empty")).to_be_visible()
    context.close()


def test_pages_fit_a_phone_without_sideways_scrolling(browser: Browser, server: Server) -> None:
    run = server.start_run("document_review", {"title": "Phone check", "topic": "small screens"})
    context = login(browser, server, "olga")
    page = context.new_page()
    page.set_viewport_size({"width": 390, "height": 844})
    for path in ("/", "/runs/", "/workflows/", f"/runs/{run['run']}/"):
        page.goto(path)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= 390, f"{path} is {width}px wide on a 390px screen"
    context.close()


def test_select_all_then_approve_answers_every_item_shown(browser: Browser, server: Server) -> None:
    items = [{"sku": f"ALL-{n}", "price": n, "flagged": True} for n in range(1, 5)]
    server.start_run("batch_review", {"items": items})
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?q=ALL-")
    expect(inbox.locator(".inbox-item")).to_have_count(4)
    inbox.get_by_label("Select all shown").check()
    expect(inbox.locator('.inbox-item input[name="ids"]:checked')).to_have_count(4)
    inbox.get_by_role("button", name="Approve selected").click()
    expect(inbox.locator("#bulk-results li.ok")).to_have_count(4)
    expect(inbox.locator(".inbox-item.answered")).to_have_count(4)
    expect(inbox.get_by_label("Select all shown")).not_to_be_checked()
    context.close()


def test_the_runs_list_names_who_answered_retried_and_cancelled(
    browser: Browser, server: Server, tmp_path: Path
) -> None:
    unlock = tmp_path / "unlock"
    failed = server.start_run("web_locked_ledger", {"unlock_file": str(unlock)}, user="olga")["run"]
    answered, cancelled = expense(server, "Una", user="olga"), expense(server, "Cyd", user="olga")
    olga = login(browser, server, "olga")
    runs = open_page(olga, "/runs/")
    people = {run: runs.locator(f'#run-row-{run} td[data-label="People"]') for run in (failed, answered)}
    expect(people[answered]).to_have_text("—")

    server.answer(answered, "manager-approval", {"approved": True}, user="piet")  # live, from the CLI
    unlock.touch()
    server.manage("wf", "retry", failed, "--user", "olga")
    server.manage("wf", "cancel", cancelled, "--user", "piet")
    expect(people[answered]).to_have_text("answered by piet")
    expect(people[failed]).to_have_text("retried by olga")
    expect(runs.locator(f"#run-row-{cancelled}")).to_contain_text("cancelled by piet")
    olga.close()

    small = phone(browser, server, "vera")  # may only look: the list names the same people
    page = open_page(small, "/runs/")
    cell = page.locator(f'#run-row-{answered} td[data-label="People"]')
    expect(cell).to_be_visible()
    expect(cell).to_have_text("answered by piet")
    label = cell.evaluate("td => getComputedStyle(td, '::before').content")
    assert label == '"People"'  # the phone's block of labelled values
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    small.close()
