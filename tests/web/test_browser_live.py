"""Live cards, drafts, the bulk checkboxes and the graph's fan-out in real Chromium.

Same serving subprocess as `test_browser.py`. Two operators (olga and piet) act in their own
browser contexts; what one does reaches the other's open pages over the websocket only.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Route, expect

from tests.web.test_browser import SHOTS, Server, item, login, open_page, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-live"), "tests.web.flows:wide_fanout") as live:
        yield live


def test_run_page_cards_close_live_when_answered_elsewhere_and_cancelled(
    browser: Browser, server: Server
) -> None:
    run = server.start_run(
        "expense_approval", {"employee": "Ines", "amount": 2500, "category": "travel", "description": "Fair"}
    )
    olga, piet = login(browser, server, "olga"), login(browser, server, "piet")
    page = open_page(olga, f"/runs/{run['run']}/")
    expect(page.locator("#run-asks .inbox-item form.schema-form")).to_have_count(2)

    inbox = open_page(piet, "/?q=Ines")
    item(inbox, "Manager approval").get_by_role("button", name="Approve").click()
    manager = page.locator("#run-asks .inbox-item", has_text="Manager approval")
    expect(manager).to_contain_text(re.compile(r"Answered by piet at \d\d:\d\d:\d\d UTC"))
    expect(manager.locator("form")).to_have_count(0)

    piet_run = open_page(piet, f"/runs/{run['run']}/")
    piet_run.once("dialog", lambda dialog: dialog.accept())
    piet_run.get_by_role("button", name="Cancel run").click()
    expect(page.locator("#run-status")).to_have_text("cancelled")
    finance = page.locator("#run-asks .inbox-item", has_text="Finance approval")
    expect(finance).to_contain_text("No longer needed: the run was cancelled.")
    expect(finance.locator("button")).to_have_count(0)
    olga.close()
    piet.close()


def test_a_draft_survives_someone_else_answering(browser: Browser, server: Server) -> None:
    run = server.start_run(
        "expense_approval", {"employee": "Jonas", "amount": 2600, "category": "travel", "description": "Rail"}
    )
    olga, piet = login(browser, server, "olga"), login(browser, server, "piet")
    page = open_page(olga, f"/runs/{run['run']}/")
    inbox = open_page(olga, "/?q=Jonas")
    manager = page.locator("#run-asks .inbox-item", has_text="Manager approval")
    manager.get_by_label("Comment").fill("Run page draft")
    finance = item(inbox, "Finance approval")
    finance.get_by_label("Comment").fill("Inbox draft")

    piet_inbox = open_page(piet, "/?q=Jonas")
    item(piet_inbox, "Manager approval").get_by_role("button", name="Reject").click()
    item(piet_inbox, "Finance approval").get_by_role("button", name="Approve").click()

    for where, text, draft in (
        (page, "Manager approval", "Run page draft"),
        (inbox, "Finance approval", "Inbox draft"),
    ):
        kept = where.locator(".inbox-item", has_text=text)
        expect(kept).to_contain_text(re.compile(r"Answered by piet at \d\d:\d\d:\d\d UTC"))
        expect(kept.locator(".draft-note")).to_be_visible()
        expect(kept.locator(".draft-note")).to_contain_text("your draft was not sent")
        expect(kept.get_by_label("Comment")).to_have_value(draft)
        for button in kept.get_by_role("button").all():
            expect(button).to_be_disabled()
    SHOTS.mkdir(parents=True, exist_ok=True)
    inbox.screenshot(path=str(SHOTS / "after-draft-kept.png"), full_page=True)
    olga.close()
    piet.close()


def _overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return (
        a["x"] < b["x"] + b["width"]
        and b["x"] < a["x"] + a["width"]
        and a["y"] < b["y"] + b["height"]
        and b["y"] < a["y"] + a["height"]
    )


def test_bulk_checkboxes_come_first_and_overlap_nothing_on_a_phone(browser: Browser, server: Server) -> None:
    items = [{"sku": f"PHONE-{n}", "price": n, "flagged": True} for n in range(1, 4)]
    server.start_run("batch_review", {"items": items})
    server.start_run(
        "expense_approval",
        {"employee": "Kai", "amount": 300, "category": "other", "description": "PHONE-desk"},
    )
    context = login(browser, server, "olga")
    page = context.new_page()
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto("/?q=PHONE")
    cards = page.locator(".inbox-item")
    expect(cards).to_have_count(4)
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "after-inbox-375.png"), full_page=True)

    # Nothing in a card sits under its checkbox.
    for box in page.locator(".bulk-select input").all():
        mine = box.bounding_box()
        assert mine is not None
        card_elt = box.locator("xpath=ancestor::li[contains(@class, 'inbox-item')]")
        # Seen first where it is reached first: before the card's title, on its first line.
        title = card_elt.locator("header .wf").bounding_box()
        assert title is not None
        assert mine["x"] + mine["width"] <= title["x"] and mine["y"] < title["y"] + title["height"]
        for other in card_elt.locator("header > :not(.bulk-select), .message, .payload, form").all():
            theirs = other.bounding_box()
            assert theirs is not None and not _overlaps(mine, theirs), other.evaluate("e => e.outerHTML")

    # Keyboard order, card by card: its checkbox, then its fields, then its submit buttons.
    page.locator(".bulk-select input").first.focus()
    page.evaluate("() => { window.firstFocus = document.activeElement; }")
    seen: list[tuple[str, str]] = []
    for step in range(80):
        if step and page.evaluate("() => document.activeElement === window.firstFocus"):
            break  # round the whole page once
        seen.append(
            page.evaluate(
                """() => {
                  const el = document.activeElement;
                  const card = el.closest('.inbox-item');
                  const role = el.name === 'ids' ? 'checkbox'
                    : el.matches('button[type=submit]') ? 'submit'
                    : el.matches('input, textarea, select') ? 'field' : 'other';
                  return [card ? card.id : '', role];
                }"""
            )
        )
        page.keyboard.press("Tab")
    order = [card_id for card_id, _ in seen if card_id]
    cards_in_order = list(dict.fromkeys(order))
    assert cards_in_order == [c.get_attribute("id") for c in cards.all()]
    for card_id in cards_in_order:
        roles = [role for cid, role in seen if cid == card_id and role != "other"]
        has_box = page.locator(f"#{card_id} .bulk-select").count() == 1
        assert roles[0] == ("checkbox" if has_box else roles[0])
        assert roles.index("submit") > max(
            (i for i, r in enumerate(roles) if r in ("checkbox", "field")), default=-1
        )
        assert roles[-1] == "submit"
    context.close()


def test_a_wide_fanout_expands_and_clipped_children_show_in_full(browser: Browser, server: Server) -> None:
    run = server.start_run("web_wide_fanout", list(range(12)))
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    worker = page.locator('#run-graph [data-node="reconcile_supplier_invoice_lines_for_q3"]')
    rows = worker.locator("g.child")
    expect(rows).to_have_count(8)
    toggle = worker.locator("[data-graph-toggle]")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(toggle).to_contain_text("+4 more")

    toggle.click()
    expect(rows).to_have_count(12)
    expect(worker.locator("[data-graph-toggle]")).to_have_attribute("aria-expanded", "true")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.locator("#run-graph").screenshot(path=str(SHOTS / "after-graph-expanded.png"))

    # With the keyboard: focus stays on the toggle, Enter folds the list, Space unfolds it.
    expect(worker.locator("[data-graph-toggle]")).to_be_focused()
    page.keyboard.press("Enter")
    expect(rows).to_have_count(8)
    expect(worker.locator("[data-graph-toggle]")).to_be_focused()
    page.keyboard.press(" ")
    expect(rows).to_have_count(12)

    # A clipped label: whole in its accessible name, and shown in full when focused.
    child = rows.first
    expect(child).to_have_attribute("aria-label", "reconcile_supplier_invoice_lines_for_q3@1: completed")
    expect(child.locator("text.full")).to_be_hidden()
    child.focus()
    expect(child.locator("text.full")).to_be_visible()
    expect(child.locator("text.full")).to_have_text("reconcile_supplier_invoice_lines_for_q3@1")
    page.locator("#run-graph").screenshot(path=str(SHOTS / "after-graph-child-focused.png"))

    # Without a socket the toggle is a plain link: the page comes back expanded.
    page.goto(f"/runs/{run['run']}/?expand=reconcile_supplier_invoice_lines_for_q3")
    expect(
        page.locator('#run-graph [data-node="reconcile_supplier_invoice_lines_for_q3"] g.child')
    ).to_have_count(12)
    context.close()


def test_batch_review_is_started_from_the_row_editor(browser: Browser, server: Server) -> None:
    context = login(browser, server, "olga")
    page = open_page(context, "/workflows/batch_review/")
    form = page.locator("#start-form")
    form.get_by_label("SKU").fill("ROW-1")
    form.get_by_label("Price").fill("12.50")
    form.get_by_role("button", name="Add item").click()
    expect(form.locator("fieldset.row")).to_have_count(2)
    expect(form.locator('[name="f.items.1.sku"]')).to_be_focused()
    page.keyboard.type("ROW-2")
    form.locator('[name="f.items.1.price"]').fill("3.10")
    form.locator('[name="f.items.1.flagged"]').check()
    form.get_by_role("button", name="Add item").click()
    expect(form.locator("fieldset.row")).to_have_count(3)
    form.get_by_role("button", name="Remove item 3").click()
    expect(form.locator("fieldset.row")).to_have_count(2)
    expect(form.get_by_role("button", name="Add item")).to_be_focused()  # the swap has settled
    expect(form.locator('[name="f.items.0.price"]')).to_have_value("12.50")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "after-batch-start.png"), full_page=True)
    form.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    expect(page.locator("#run-status")).to_have_text("waiting")
    expect(page.locator("#run-asks")).to_contain_text("Item ROW-2 (price 3.10) was flagged")
    context.close()


def test_an_answer_on_its_way_is_not_overtaken_by_the_live_update(browser: Browser, server: Server) -> None:
    """The socket's closed card arriving before the answer's own response loses nothing."""
    server.start_run(
        "expense_approval", {"employee": "Lars", "amount": 400, "category": "meals", "description": "Dinner"}
    )
    context = login(browser, server, "olga")
    errors: list[str] = []
    context.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    inbox = open_page(context, "/?q=Lars")

    def late(route: Route) -> None:
        response = route.fetch()  # the answer is recorded and the doorbell rings now...
        time.sleep(1.5)  # ...and the socket's update reaches the page before this response does
        route.fulfill(response=response)

    inbox.route("**/interrupts/*/answer/", late)
    item(inbox, "Lars").get_by_label("Comment").fill("Fine")
    item(inbox, "Lars").get_by_role("button", name="Approve").click()
    expect(inbox.locator(".inbox-item.answered")).to_contain_text("Answered by olga")
    expect(inbox.locator(".inbox-item.answered")).to_contain_text("Approved · Comment: Fine")
    expect(inbox.locator(".inbox-item.answered .draft-note")).to_be_hidden()
    expect(inbox.locator(".inbox-item.answered form")).to_have_count(0)
    assert errors == []
    context.close()
