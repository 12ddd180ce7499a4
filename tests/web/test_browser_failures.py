"""Failure handling and comparing states in real Chromium: a failed node's folded traceback and
attempts, retry with an edited input (refused, then accepted), one failed branch of a fan-out
retried, cancel with a reason, the state as of an event and the diff between two, shareable
and kept while live updates arrive; on a phone and by keyboard."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web.test_browser import Server, expense, login, open_page, open_waiting_run, serving

FLOWS = "tests.web.flows:orders,tests.web.flows:stock_take,tests.web.flows:tally,tests.web.flows:quarter_end"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-failures"), FLOWS) as live:
        yield live


def _seq_of(page: Page, title: str, path_end: str) -> int:
    item = page.locator("#timeline > li", has_text=title).filter(has_text=path_end).first
    return int(item.get_attribute("data-seq") or 0)


def test_a_failed_start_node_is_retried_with_an_edited_input(browser: Browser, server: Server) -> None:
    run = server.start_run("web_orders", {"sku": "A-1", "quantity": 12})
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    failure = page.locator("#run-failures .failure")
    expect(failure).to_contain_text("RuntimeError: the ledger refuses 12 of A-1")
    traceback = failure.locator("details.traceback pre")
    expect(traceback).to_be_hidden()  # folded
    failure.locator("details.traceback summary").click()
    expect(traceback).to_contain_text("in post_order")

    failure.get_by_text("Retry with an edited input (the run's start input)").click()
    quantity = failure.get_by_label("Quantity")
    expect(quantity).to_have_value("12")  # the input it failed on
    quantity.fill("0")
    # The browser's own check (min=1) would stop it first; the server's check must hold alone.
    failure.locator("form.schema-form").evaluate("form => { form.noValidate = true; }")
    failure.get_by_role("button", name="Retry with this input").click()
    expect(failure.locator(".errors")).to_contain_text("Enter a value of at least 1.")
    expect(page.locator("#run-status")).to_have_text("failed")

    failure.get_by_label("Quantity").fill("4")
    failure.get_by_role("button", name="Retry with this input").click()
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#run-failures")).to_contain_text("Retried by olga")
    expect(page.locator("#run-failures")).to_contain_text("with an edited input")
    expect(page.locator("#run-failures .status.completed")).to_have_text("recovered")
    expect(page.locator("#timeline")).to_contain_text("Retried by olga")
    expect(page.locator("#run-output")).to_contain_text("4")
    context.close()


def test_one_failed_branch_of_a_fan_out_is_retried_alone(browser: Browser, server: Server) -> None:
    run = server.start_run("web_stock_take", {"region": "south"})
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    expect(page.locator('[data-node="count_stock"]')).to_have_attribute("data-status", "completed")
    expect(page.locator('[data-node="price_stock"]')).to_have_attribute("data-status", "failed")
    cards = page.locator("#run-failures .failure")
    expect(cards).to_have_count(1)
    card = cards.first
    expect(card).to_contain_text("web_stock_take@1/price_stock@1")
    card.get_by_text("Retry with an edited input").click()
    field = card.get_by_label("Input")
    field.fill('{"region": "south", "fixed": tru')
    card.get_by_role("button", name="Retry with this input").click()
    expect(card.locator(".errors")).to_be_visible()  # not JSON: said so, nothing sent
    expect(page.locator("#run-status")).to_have_text("failed")
    card.get_by_label("Input").fill('{"region": "south", "fixed": true}')
    card.get_by_role("button", name="Retry with this input").click()
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#run-output")).to_contain_text("south")
    # The completed branch ran once: one "Started" for it in the whole timeline.
    started = page.locator("#timeline > li.kind-started", has_text="web_stock_take@1/count_stock@1")
    expect(started).to_have_count(1)
    context.close()


def test_cancel_with_a_reason_shows_who_and_why(browser: Browser, server: Server) -> None:
    run = server.start_run("web_orders", {"sku": "B-2", "quantity": 50})
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    page.get_by_label("Reason for cancelling").fill("duplicate order")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel run").click()
    expect(page.locator("#run-status")).to_have_text("cancelled")
    expect(page.locator("#run-cancel-reason")).to_have_text("Cancelled by olga · Reason: duplicate order")
    expect(page.locator("#timeline")).to_contain_text("Run cancelled by olga")
    context.close()


def test_the_state_as_of_an_event_and_the_changes_between_two(browser: Browser, server: Server) -> None:
    run = server.start_run("web_tally", {})
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    first = _seq_of(page, "Output", "count_in@1")
    second = _seq_of(page, "Output", "count_more@1")
    page.locator(f"#event-{first} a.seq-link").click()
    panel = page.locator("#run-compare")
    expect(panel.locator("h2")).to_have_text(f"State as of #{first}")
    expect(panel.locator("#compare-state")).to_contain_text("apple")
    expect(panel.locator("#compare-state")).not_to_contain_text("pear")
    expect(page).to_have_url(re.compile(rf"/runs/{run['run']}/\?at={first}$"))
    expect(page.locator(f"#event-{first}")).to_have_class(re.compile("is-at"))

    panel.get_by_label(re.compile("Compare")).check()
    page.locator(f"#event-{second} a.seq-link").click()
    expect(panel.locator("h2")).to_have_text(f"Changes from #{first} to #{second}")
    diff = panel.locator("#compare-diff")
    expect(diff.locator("tr.diff-added", has_text="State › Items › item 2")).to_contain_text("pear")
    expect(diff.locator("tr.diff-changed", has_text="State › Count")).to_contain_text("2")
    expect(page).to_have_url(re.compile(rf"\?at={second}&from={first}$"))

    shared = context.new_page()  # the URL is shareable: it opens on the same comparison
    shared.goto(page.url)
    expect(shared.locator("#run-compare h2")).to_have_text(f"Changes from #{first} to #{second}")
    expect(shared.locator(f"#event-{first}")).to_have_class(re.compile("is-from"))

    shared.goto(f"/runs/{run['run']}/?at=999")
    expect(shared.locator("#compare-error")).to_contain_text("This run has no event #999")
    context.close()


def test_live_updates_keep_the_selected_event(browser: Browser, server: Server) -> None:
    run = expense(server, "Ida", 700)
    context = login(browser, server, "olga")
    page = open_waiting_run(context, run)
    link = page.locator("#timeline > li a.seq-link").nth(1)
    link.focus()
    page.keyboard.press("Enter")  # by keyboard
    seq = int(link.get_attribute("data-seq") or 0)
    expect(page.locator("#run-compare h2")).to_have_text(f"State as of #{seq}")
    url = page.url

    server.answer(run, "manager-approval", {"approved": True}, user="piet")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#timeline")).to_contain_text("Answered by piet")
    expect(page.locator("#run-compare h2")).to_have_text(f"State as of #{seq}")
    expect(page.locator(f"#event-{seq}")).to_have_class(re.compile("is-at"))
    assert page.url == url
    context.close()


def test_failures_and_comparisons_fit_a_phone(browser: Browser, server: Server) -> None:
    run = server.start_run("web_orders", {"sku": "C-3", "quantity": 99})
    context = login(browser, server, "olga")
    page = context.new_page()
    page.set_viewport_size({"width": 375, "height": 800})
    page.goto(f"/runs/{run['run']}/?at=2&from=1")
    page.locator("#run-failures details.traceback summary").click()
    page.get_by_text("Retry with an edited input").click()
    expect(page.locator("#run-compare h2")).to_have_text("Changes from #1 to #2")
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 375, f"the run page is {width}px wide on a 375px screen"
    context.close()


LONG_PATH = (
    "web_quarter_end_close@1/close_subsidiary_ledgers_for_the_quarter@1/"
    "post_adjusting_entries_to_the_general_ledger@1"
)
# Each place a node path is written in the failures: the characters drawn outside the failure's
# card, or under an ancestor that cuts them off (an ellipsis, hidden overflow), none allowed.
CUT_PATHS = """() => Array.from(document.querySelectorAll("#run-failures .failure .path")).flatMap(el => {
  const card = el.closest(".failure").getBoundingClientRect();
  const range = document.createRange();
  range.selectNodeContents(el);
  const outside = Array.from(range.getClientRects())
    .filter(r => r.left < card.left - 1 || r.right > card.right + 1);
  const cutters = [];
  for (let at = el; at && !at.matches(".failure"); at = at.parentElement) {
    const style = getComputedStyle(at);
    if (style.textOverflow === "ellipsis" || (style.overflowX !== "visible" && at.scrollWidth > at.clientWidth))
      cutters.push(at.tagName + "." + at.className);
  }
  return outside.length || cutters.length
    ? [`${el.textContent}: ${outside.length} lines outside, cut by ${cutters.join(", ")}`] : [];
})"""


@pytest.mark.parametrize("width", [1280, 375])
def test_the_failures_show_a_long_node_path_whole(browser: Browser, server: Server, width: int) -> None:
    assert len(LONG_PATH) > 100
    run = server.start_run("web_quarter_end_close", {})
    context = login(browser, server, "olga", viewport={"width": width, "height": 800})
    page = open_page(context, f"/runs/{run['run']}/")
    failure = page.locator("#run-failures .failure")
    expect(failure).to_contain_text("RuntimeError: the period is closed")
    heading = failure.locator("h3 .path")
    expect(heading).to_have_text(LONG_PATH)  # the whole path, not an ellipsis or its end
    expect(page.locator("#run-error")).to_contain_text(LONG_PATH)
    reason = failure.get_by_label(f"Reason for retrying {LONG_PATH} (optional)")
    expect(reason).to_be_visible()
    box = reason.bounding_box()
    assert box is not None and box["height"] < 60  # a one-line field, not a column-tall box
    assert page.evaluate(CUT_PATHS) == []
    width_drawn = page.evaluate("() => document.documentElement.scrollWidth")
    assert width_drawn <= width, f"the run page is {width_drawn}px wide on a {width}px screen"
    context.close()
