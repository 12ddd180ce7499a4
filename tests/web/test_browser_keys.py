"""Keyboard triage in real Chromium: j/k, a/r, x, b, / and ? on the inbox, keyboard only.

Same serving subprocess as `test_browser.py`, with a free-text question registered (never
answered with a key: it needs its form).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.web.test_browser import Server, login, open_page, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    # Long enough to press u in: an answer from a key or the bulk bar waits this long for Undo.
    undo = {"WFAPP_UNDO_SECONDS": "3"}
    with serving(tmp_path_factory.mktemp("browser-keys"), "tests.web.flows:free_text", **undo) as live:
        yield live


def _expense(server: Server, employee: str, tag: str) -> str:
    """A run waiting for one manager's yes-or-no; `tag` (in its message) finds it in the inbox."""
    node_input = {"employee": employee, "amount": 400, "category": "travel", "description": tag}
    return str(server.start_run("expense_approval", node_input)["run"])


def _focused_card(page: Page) -> str:
    return str(page.evaluate("() => (document.activeElement.closest('.inbox-item') || {}).id || ''"))


def _status(server: Server, run: str) -> dict[str, Any]:
    return dict(json.loads(server.manage("wf", "show", run)))


def test_j_k_move_between_cards_and_a_r_answer_the_focused_one(browser: Browser, server: Server) -> None:
    runs = [_expense(server, name, "tag-jk") for name in ("Kira", "Kobe", "Kurt")]
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=tag-jk")
    cards = page.locator(".inbox-item:not(.answered)")
    expect(cards).to_have_count(3)
    ids = [cards.nth(i).get_attribute("id") for i in range(3)]
    status = page.locator("#keys-status")
    expect(status).to_have_attribute("aria-live", "polite")

    page.keyboard.press("j")
    assert _focused_card(page) == ids[0]
    expect(status).to_contain_text("Question 1 of 3")
    page.keyboard.press("j")
    page.keyboard.press("j")
    assert _focused_card(page) == ids[2]
    page.keyboard.press("j")  # past the last: stays, and says so
    assert _focused_card(page) == ids[2]
    expect(status).to_contain_text("last question")
    page.keyboard.press("k")
    page.keyboard.press("k")
    assert _focused_card(page) == ids[0]

    page.keyboard.press("a")  # Kira approved; focus goes on to Kobe's card
    expect(page.locator(f"#{ids[0]}.answered")).to_contain_text("Approved")
    page.wait_for_function(f"() => document.activeElement.id === {ids[1]!r}")
    expect(status).to_contain_text("Next:")
    page.keyboard.press("r")  # Kobe rejected
    expect(page.locator(f"#{ids[1]}.answered")).to_contain_text("Rejected")
    page.wait_for_function(f"() => document.activeElement.id === {ids[2]!r}")
    assert _status(server, runs[0])["status"] == "completed"
    assert _status(server, runs[1])["status"] == "completed"
    assert _status(server, runs[2])["status"] == "waiting"  # Kurt untouched
    context.close()


def _focused_line(page: Page) -> str:
    """The card whose list-view line has the focus ('' when the focus is elsewhere)."""
    script = "() => { const at = document.activeElement;"
    script += " return at.matches('.row-line') ? at.closest('.inbox-item').id : ''; }"
    return str(page.evaluate(script))


def test_j_k_step_through_the_list_views_lines_and_a_r_answer_the_selected_one(
    browser: Browser, server: Server
) -> None:
    runs = [_expense(server, name, "tag-lines") for name in ("Lena", "Lars", "Lou")]
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=tag-lines&view=list")
    cards = page.locator(".inbox-item:not(.answered)")
    expect(cards).to_have_count(3)
    ids = [str(cards.nth(i).get_attribute("id")) for i in range(3)]
    lines = [page.locator(f"#{card_id} .row-line") for card_id in ids]
    approve = [
        page.locator(f"#{card_id}").get_by_role("button", name="Approve", exact=True) for card_id in ids
    ]
    status = page.locator("#keys-status")

    page.keyboard.press("j")  # the first line: selected, its card open beside the list
    assert _focused_line(page) == ids[0]
    expect(lines[0]).to_have_attribute("aria-current", "true")
    expect(lines[0]).to_have_attribute("aria-expanded", "true")
    expect(approve[0]).to_be_visible()
    expect(status).to_contain_text("Question 1 of 3")
    page.keyboard.press("j")  # the second: the first closes, one selection at a time
    assert _focused_line(page) == ids[1]
    expect(lines[1]).to_have_attribute("aria-current", "true")
    expect(lines[0]).not_to_have_attribute("aria-current", "true")
    expect(lines[0]).to_have_attribute("aria-expanded", "false")
    expect(approve[0]).to_be_hidden()
    expect(approve[1]).to_be_visible()
    expect(page.locator(".row-line[aria-current]")).to_have_count(1)
    page.keyboard.press("k")
    assert _focused_line(page) == ids[0]
    expect(approve[0]).to_be_visible()
    expect(approve[1]).to_be_hidden()
    page.keyboard.press("j")

    page.keyboard.press("a")  # Lars approved; the next line is selected and its card opened
    expect(page.locator(f"#{ids[1]}.answered")).to_contain_text("Approved")
    page.wait_for_function(
        "id => document.activeElement.matches('.row-line') && document.activeElement.closest('.inbox-item').id === id",
        arg=ids[2],
    )
    expect(lines[2]).to_have_attribute("aria-current", "true")
    expect(approve[2]).to_be_visible()
    expect(status).to_contain_text("Next:")
    page.keyboard.press("r")  # Lou rejected; Lena, before, is the one left
    expect(page.locator(f"#{ids[2]}.answered")).to_contain_text("Rejected")
    page.wait_for_function(
        "id => document.activeElement.matches('.row-line') && document.activeElement.closest('.inbox-item').id === id",
        arg=ids[0],
    )
    expect(lines[0]).to_have_attribute("aria-current", "true")
    assert _status(server, runs[1])["status"] == "completed"
    assert _status(server, runs[2])["status"] == "completed"
    assert _status(server, runs[0])["status"] == "waiting"  # Lena untouched

    # Claim replaces the whole card: it stays open and selected, the focus back on its line.
    page.locator(f"#{ids[0]}").get_by_role("button", name="Claim").click()
    expect(page.locator(f"#{ids[0]}")).to_contain_text("You hold this")
    expect(lines[0]).to_have_attribute("aria-current", "true")
    expect(approve[0]).to_be_visible()
    page.wait_for_function(
        "id => document.activeElement.matches('.row-line') && document.activeElement.closest('.inbox-item').id === id",
        arg=ids[0],
    )

    page.locator(f"#{ids[0]} .row-line").click()  # a click closes the selected card, as before
    expect(lines[0]).to_have_attribute("aria-expanded", "false")
    expect(page.locator(".row-line[aria-current]")).to_have_count(0)
    context.close()


def test_a_question_that_needs_its_form_is_not_answered_by_a_key(browser: Browser, server: Server) -> None:
    run = str(server.start_run("web_free_text", {})["run"])
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=Write+the+note")
    expect(page.locator(".inbox-item")).to_have_count(1)
    page.keyboard.press("j")
    page.keyboard.press("a")
    expect(page.locator("#keys-status")).to_contain_text("needs its form")
    page.keyboard.press("x")
    expect(page.locator("#keys-status")).to_contain_text("cannot be answered in bulk")
    expect(page.locator(".inbox-item.answered")).to_have_count(0)
    assert _status(server, run)["status"] == "waiting"
    context.close()


def test_x_ticks_and_b_reaches_the_bulk_bar(browser: Browser, server: Server) -> None:
    runs = [_expense(server, name, "tag-x") for name in ("Xena", "Xavi")]
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=tag-x")
    cards = page.locator(".inbox-item:not(.answered)")
    expect(cards).to_have_count(2)
    page.keyboard.press("j")
    page.keyboard.press("x")
    page.keyboard.press("j")
    page.keyboard.press("x")
    expect(page.locator("#keys-status")).to_contain_text("2 ticked")
    expect(page.locator(".bulk-select input:checked")).to_have_count(2)
    page.keyboard.press("b")  # from the last card, no tabbing back up
    focused = page.evaluate("() => document.activeElement.textContent.trim()")
    assert focused == "Approve selected"
    page.keyboard.press("Enter")
    expect(page.locator("#bulk-results li.ok")).to_have_count(2)
    for run in runs:
        assert _status(server, run)["status"] == "completed"
    context.close()


def test_slash_focuses_search_and_keys_are_ignored_while_typing(browser: Browser, server: Server) -> None:
    _expense(server, "Sami", "tag-slash")
    context = login(browser, server, "olga")
    page = open_page(context, "/")
    page.keyboard.press("/")
    assert page.evaluate("() => document.activeElement.id") == "inbox-q"
    page.keyboard.type("jax?")  # typed into the field, not taken as keys
    expect(page.locator("#inbox-q")).to_have_value("jax?")
    assert _focused_card(page) == ""
    expect(page.locator("#keys-help")).not_to_be_visible()
    expect(page.locator(".inbox-item.answered")).to_have_count(0)
    context.close()


def test_question_mark_lists_the_keys_and_escape_closes(browser: Browser, server: Server) -> None:
    context = login(browser, server, "olga")
    for path, has_cards in (("/", True), ("/runs/", False)):
        page = open_page(context, path)
        dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
        expect(dialog).to_be_hidden()
        page.keyboard.press("?")
        expect(dialog).to_be_visible()
        expect(dialog).to_contain_text("Search")
        expect(dialog.get_by_text("Next / previous question")).to_have_count(1 if has_cards else 0)
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        page.keyboard.press("/")  # the runs list has a search field too
        assert page.evaluate("() => document.activeElement.type") == "search"
        page.close()
    context.close()


def _tab_to(page: Page, selector: str) -> None:
    target = page.locator(selector)
    for _ in range(60):
        page.keyboard.press("Tab")
        if target.evaluate("el => el === document.activeElement"):
            return
    raise AssertionError(f"{selector} is not reachable with Tab")


def test_runs_found_by_input_shared_as_a_url_and_saved(browser: Browser, server: Server) -> None:
    """Keyboard only: / to the search, type a name, save the filter, apply it, delete it."""
    for name in ("Quinn Q", "Rhea R"):
        server.start_run(
            "expense_approval", {"employee": name, "amount": 20, "category": "other", "description": "Pens"}
        )
    context = login(browser, server, "olga")
    page = open_page(context, "/runs/")
    rows = page.locator("#runs-body tr[id^='run-row-']")
    page.keyboard.press("/")
    page.keyboard.type("quinn")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("expense_approval")
    page.wait_for_url("**/runs/?*text=quinn*")
    shared = page.url

    _tab_to(page, ".save-filter-box > summary")
    page.keyboard.press("Enter")  # unfold the save form
    _tab_to(page, "#save-filter-name")
    page.keyboard.type("Quinn's runs")
    page.keyboard.press("Enter")
    saved = page.get_by_role("link", name="Quinn's runs")
    expect(saved).to_be_visible()

    page.goto("/runs/?started_from=someday")  # a bad value: said, and nothing listed as filtered
    expect(page.locator("#runs-problems")).to_contain_text("Started from 'someday' is not a date")
    expect(rows).to_have_count(0)

    fresh = open_page(context, "/runs/")
    expect(fresh.locator("#runs-body tr[id^='run-row-']")).not_to_have_count(1)
    _tab_to(fresh, "#saved-filters a")
    fresh.keyboard.press("Enter")
    fresh.wait_for_url("**/runs/?text=quinn")
    expect(fresh.locator("#runs-body tr[id^='run-row-']")).to_have_count(1)
    assert fresh.url.split("?")[1] in shared
    _tab_to(fresh, "#saved-filters button[aria-label^='Delete']")
    fresh.keyboard.press("Enter")
    expect(fresh.get_by_role("link", name="Quinn's runs")).to_have_count(0)
    context.close()


def test_a_key_answer_waits_for_undo_and_u_takes_it_back(browser: Browser, server: Server) -> None:
    """r and a give a few seconds to undo: u (or the Undo button) and nothing is sent."""
    undone, approved = (_expense(server, name, "tag-undo") for name in ("Ursa", "Umar"))
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=tag-undo")
    expect(page.locator(".inbox-item:not(.answered)")).to_have_count(2)
    bar = page.locator("#undo-bar")
    expect(bar).to_be_hidden()
    page.keyboard.press("j")
    page.keyboard.press("r")
    expect(bar).to_contain_text("Rejecting: Manager approval: Ursa")
    expect(bar.get_by_role("button", name="Undo")).to_be_visible()
    page.keyboard.press("u")
    expect(bar).to_contain_text("Undone")
    expect(bar.get_by_role("button", name="Undo")).to_be_hidden()

    page.keyboard.press("j")  # Umar's: approved once its window has passed, well after Ursa's would have
    page.keyboard.press("a")
    expect(bar).to_contain_text("Approving: Manager approval: Umar")
    expect(page.locator(".inbox-item.answered")).to_contain_text("Umar")
    assert _status(server, approved)["status"] == "completed"
    assert _status(server, undone)["status"] == "waiting"  # Ursa's rejection was never sent
    expect(page.locator(".inbox-item:not(.answered)")).to_contain_text("Ursa")
    context.close()


def test_a_bulk_answer_waits_for_undo(browser: Browser, server: Server) -> None:
    kept, sent = (_expense(server, name, "tag-bulkundo") for name in ("Bea", "Bo"))
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=tag-bulkundo")
    boxes = page.locator(".bulk-select input")
    expect(boxes).to_have_count(2)
    boxes.nth(0).check()
    boxes.nth(1).check()
    page.get_by_role("button", name="Approve selected").click()
    bar = page.locator("#undo-bar")
    expect(bar).to_contain_text("Approving 2 ticked questions")
    bar.get_by_role("button", name="Undo").click()
    expect(bar).to_contain_text("Undone")
    expect(page.locator("#bulk-results li")).to_have_count(0)

    bea = page.locator(".inbox-item", has_text="Bea").locator(".bulk-select input")
    bea.uncheck()  # Bo alone, this time
    page.get_by_role("button", name="Approve selected").click()
    expect(page.locator("#bulk-results li.ok")).to_have_count(1)
    assert _status(server, sent)["status"] == "completed"
    assert _status(server, kept)["status"] == "waiting"  # the undone answer never went
    context.close()


def _spots(*buttons: Locator) -> list[tuple[int, int]]:
    """Where buttons are, to the pixel (what a person would see move)."""
    boxes = [button.bounding_box() for button in buttons]
    return [(round(box["x"]), round(box["y"])) for box in boxes if box is not None]


def test_the_one_reason_field_keeps_its_error_on_it_and_nothing_moves(
    browser: Browser, server: Server
) -> None:
    """A batch item's card: one reason field; a reason with Approve is refused on that field
    (aria-invalid, aria-describedby), the buttons stay where they were; Reject then sends it."""
    flagged = {"items": [{"sku": "REASON-1", "price": 9, "flagged": True}]}
    run = str(server.start_run("batch_review", flagged)["run"])
    context = login(browser, server, "olga")
    page = open_page(context, "/?q=REASON-1")
    card = page.locator(".inbox-item:not(.answered)")
    expect(card).to_have_count(1)
    expect(card.locator("textarea")).to_have_count(1)  # one reason field, always shown
    expect(card.get_by_text("Reject with reason")).to_have_count(0)
    reason = card.get_by_label("Reason for rejecting")
    approve = card.get_by_role("button", name="Approve", exact=True)
    reject = card.get_by_role("button", name="Reject", exact=True)
    before = _spots(approve, reject)
    reason.fill("Scratched lid")
    approve.click()
    expect(reason).to_have_attribute("aria-invalid", "true")
    described = page.locator("#" + str(reason.get_attribute("aria-describedby")))
    expect(described).to_contain_text("A reason goes with a rejection")
    expect(reason).to_have_value("Scratched lid")
    assert _spots(approve, reject) == before  # the layout did not jump
    assert _status(server, run)["status"] == "waiting"
    reject.click()
    expect(page.locator(".inbox-item.answered")).to_contain_text("Answered by olga")
    timeline = open_page(context, f"/runs/{run}/")
    expect(timeline.locator("body")).to_contain_text("Rejected: Scratched lid")
    context.close()
