"""Run actions in real Chromium: a failed run retried after the cause is fixed, a run cancelled.

Same serving subprocess as `test_browser.py`, with one extra workflow registered that fails
until a file exists, so the retry is a real second attempt.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, login, open_page, serving


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
