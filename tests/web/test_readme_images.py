"""The README tour's pictures, taken from the current pages in real Chromium, desktop and phone.

Each test checks what its picture must show, then saves it under the README's name in
`SHOTS` (``WFAPP_SCREENSHOTS``, else ``var/screenshots``). To refresh the README's pictures:
``WFAPP_SCREENSHOTS=docs/images .venv/bin/python -m pytest tests/web/test_readme_images.py``
(what ``make screenshots`` does).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Locator, Page, expect

from tests.web.test_browser import SHOTS, Server, expense, login, open_page, open_waiting_run, phone, serving

FLOWS = "tests.web.flows:orders,tests.web.flows:tally,tests.web.flows:locked_ledger"
# Over 10,000: the manager decides, and two finance people must approve (a quorum).
FRIDA = {"employee": "Frida", "amount": 24000, "category": "equipment", "description": "Laptop"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("readme-images"), FLOWS) as live:
        yield live


@pytest.fixture(scope="module")
def frida(server: Server) -> str:
    """A run waiting for the manager's approval and a quorum of two finance approvals, with
    others in the inbox."""
    run = str(server.start_run("expense_approval", FRIDA, user="piet")["run"])  # olga, shown, decides
    server.start_run(
        "batch_review", {"items": [{"sku": "KB-104", "price": 89, "flagged": True}]}, user="piet"
    )
    server.start_run("document_review", {"title": "Travel policy", "topic": "booking trains"}, user="piet")
    return run


def _desktop_and_phone(
    browser: Browser, server: Server, desktop: str, small: str, scheme: str = "light"
) -> list[tuple[BrowserContext, str]]:
    """Olga's desktop and 375 px phone contexts, each with the name of its picture."""
    return [(login(browser, server, "olga", scheme), desktop), (phone(browser, server, "olga"), small)]


def _save(target: Page | Locator, name: str) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / name
    if isinstance(target, Page):
        target.screenshot(path=str(path), full_page=True)
    else:
        target.screenshot(path=str(path))
    assert path.stat().st_size > 10_000, f"{name} looks empty"
    return path


def test_the_inbox(browser: Browser, server: Server, frida: str) -> None:
    for context, name in _desktop_and_phone(browser, server, "inbox.png", "inbox-phone.png"):
        inbox = open_page(context, "/")
        expect(inbox.locator(".inbox-item", has_text="Frida")).to_have_count(2)  # manager and finance
        expect(inbox.locator(".inbox-item", has_text="KB-104")).to_have_count(1)
        _save(inbox, name)
        context.close()


def test_the_inbox_as_a_list_with_a_card_open_beside_it(browser: Browser, server: Server, frida: str) -> None:
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?view=list")
    line = inbox.locator(".row-line", has_text="Frida: 24,000.00 equipment").first
    expect(line.locator(".assignee")).to_have_text(re.compile("Managers|Finance"))
    line.click()
    expect(inbox.locator(".inbox-item.open").get_by_role("button", name="Approve")).to_be_visible()
    _save(inbox, "inbox-list.png")
    context.close()


def test_a_run_in_dark_mode_and_on_a_phone(browser: Browser, server: Server, frida: str) -> None:
    """Its summary for a title, and the finance quorum in words once olga gave one of two."""
    server.answer(frida, "finance-approval", {"approved": True}, user="olga")
    for context, name in _desktop_and_phone(browser, server, "run-dark.png", "run-phone.png", scheme="dark"):
        page = open_waiting_run(context, frida)
        expect(page.locator("h1")).to_contain_text("Frida: 24,000.00 equipment")
        expect(page.locator("#run-asks .inbox-item")).to_have_count(2)
        finance = page.locator("#run-asks .inbox-item", has_text="Finance approval")
        expect(finance.locator(".quorum")).to_have_text("1 of 2 approvals: olga")
        expect(finance.locator(".refusal")).to_have_text("You approved; waiting for 1 more approval.")
        expect(page.locator("#timeline")).to_contain_text("Run started by piet")
        _save(page, name)
        context.close()


def test_the_runs_list_with_who_did_what(
    browser: Browser, server: Server, frida: str, tmp_path: Path
) -> None:
    unlock = tmp_path / "unlock"
    retried = server.start_run("web_locked_ledger", {"unlock_file": str(unlock)}, user="olga")["run"]
    unlock.touch()
    server.manage("wf", "retry", retried, "--user", "piet")
    answered, cancelled = expense(server, "Hugo", user="piet"), expense(server, "Ines", user="olga")
    server.answer(answered, "manager-approval", {"approved": True, "comment": "Fine"}, user="olga")
    server.manage("wf", "cancel", cancelled, "--user", "piet", "--reason", "booked twice")
    for context, name in _desktop_and_phone(browser, server, "runs.png", "runs-phone.png"):
        runs = open_page(context, "/runs/")
        expect(runs.locator(f"#run-row-{answered}")).to_contain_text("answered by olga")
        expect(runs.locator(f"#run-row-{answered}")).to_contain_text("Hugo: 500.00 travel")  # its summary
        expect(runs.locator(f"#run-row-{answered}")).to_contain_text("approved")  # its outcome
        expect(runs.locator(f"#run-row-{cancelled}")).to_contain_text("cancelled by piet")
        expect(runs.locator(f"#run-row-{retried}")).to_contain_text("retried by piet")
        _save(runs, name)
        context.close()


def test_a_failed_node_with_its_retry_form(browser: Browser, server: Server) -> None:
    run = server.start_run("web_orders", {"sku": "A-1", "quantity": 12})["run"]
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run}/")
    failure = page.locator("#run-failures .failure")
    expect(failure).to_contain_text("RuntimeError: the ledger refuses 12 of A-1")
    failure.get_by_text("Retry with an edited input (the run's start input)").click()
    expect(failure.get_by_label("Quantity")).to_have_value("12")
    _save(page.locator("#run-failures"), "run-failure.png")
    context.close()


def test_the_changes_between_two_events(browser: Browser, server: Server) -> None:
    run = server.start_run("web_tally", {})["run"]
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run}/")
    first, second = (
        page.locator("#timeline > li", has_text="Output").filter(has_text=end).first.get_attribute("data-seq")
        for end in ("count_in@1", "count_more@1")
    )
    page.locator(f"#event-{first} a.seq-link").click()
    panel = page.locator("#run-compare")
    panel.get_by_label(re.compile("Compare")).check()
    page.locator(f"#event-{second} a.seq-link").click()
    expect(panel.locator("h2")).to_have_text(f"Changes from #{first} to #{second}")
    expect(panel.locator("#compare-diff tr.diff-added", has_text="Items")).to_contain_text("pear")
    _save(panel, "run-compare.png")
    context.close()
