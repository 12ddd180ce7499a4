"""The operator's day, part two (issue 27, items 10 to 12) in real Chromium: the phone run page
puts the decision first with tap targets of 24 px, the team set-up an administrator does from the
pages, and the smaller things.

Same serving subprocess as `test_browser.py`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.web.test_browser import PHONE, Server, expense, login, open_page, phone, serving

MIN_TARGET = 24  # px: WCAG 2.2's target size (minimum)
# What a finger taps: controls, summaries, tabs and button-like links (links inside a sentence
# are exempt). Hidden ones and the Enter-only default button are not targets.
TARGETS = """() => Array.from(document.querySelectorAll(
    "button, input:not([type=hidden]), select, textarea, summary, .tabs a, a.btn"))
  .filter(el => el.getClientRects().length && el.getAttribute("aria-hidden") !== "true"
    && getComputedStyle(el).visibility !== "hidden" && !el.closest(".visually-hidden, [hidden]"))
  .map(el => { const r = el.getBoundingClientRect();
    return {what: el.outerHTML.slice(0, 90), width: r.width, height: r.height}; })
  .filter(r => r.width < 24 || r.height < 24)"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-day")) as live:
        yield live


def _small_targets(page: Page) -> list[dict[str, object]]:
    return list(page.evaluate(TARGETS))


def test_a_phone_run_page_shows_the_decision_first_and_every_target_is_24_px(
    browser: Browser, server: Server
) -> None:
    run = expense(server, "Tamsin", amount=600)
    olga = phone(browser, server, "olga")
    page = open_page(olga, f"/runs/{run}/")
    question = page.locator("#run-asks .inbox-item")
    expect(question).to_contain_text("Tamsin")
    asked = question.bounding_box()
    graph = page.locator("#run-graph").bounding_box()
    cancel = page.get_by_role("button", name="Cancel run").bounding_box()
    assert asked is not None and graph is not None and cancel is not None
    assert asked["y"] < cancel["y"] < graph["y"]  # the question, then Cancel, then the graph
    assert asked["y"] < PHONE["height"]  # on the first screen
    approve = question.get_by_role("button", name="Approve", exact=True).bounding_box()
    assert approve is not None and approve["y"] + approve["height"] <= PHONE["height"]
    assert _small_targets(page) == []

    inbox = open_page(olga, "/?q=Tamsin")
    box = inbox.locator(".bulk-select input").first.bounding_box()  # the bulk checkbox too
    assert box is not None and box["width"] >= MIN_TARGET and box["height"] >= MIN_TARGET
    assert _small_targets(inbox) == []
    olga.close()


# Every text with its colour and the background it is drawn on (the first ancestor's that is
# not transparent): the pairs under WCAG AA (4.5:1; 3:1 for large text), as axe's rule measures.
LOW_CONTRAST = """() => {
  const rgb = c => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => [r, g, b].map(v => { v /= 255;
    return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); })
    .reduce((sum, v, i) => sum + v * [0.2126, 0.7152, 0.0722][i], 0);
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + .05) / (y + .05); };
  const background = el => { const layers = [];  // see-through ones laid over what is under them
    for (let at = el; at; at = at.parentElement) {
      const c = rgb(getComputedStyle(at).backgroundColor);
      if (c.length === 3 || c[3] >= 1) { layers.push(c.slice(0, 3)); break; }
      if (c[3] > 0) layers.push(c); }
    return layers.reverse().reduce((under, c) => c.length === 3 ? c
      : under.map((u, i) => c[i] * c[3] + u * (1 - c[3])), [255, 255, 255]); };
  const low = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    if (!node.textContent.trim() || !el || !el.getClientRects().length) continue;
    const style = getComputedStyle(el);
    if (style.visibility === "hidden" || parseFloat(style.opacity) === 0) continue;
    const size = parseFloat(style.fontSize), bold = parseInt(style.fontWeight) >= 700;
    const need = size >= 24 || (bold && size >= 18.66) ? 3 : 4.5;
    const got = ratio(rgb(style.color).slice(0, 3), background(el).slice(0, 3));
    if (got < need) low.push(`${el.className || el.tagName} in ${el.parentElement.className}: `
      + `${node.textContent.trim().slice(0, 30)} ${style.color} ${got.toFixed(2)}`);
  }
  return low;
}"""


def test_the_api_docs_page_leads_back_waits_for_try_it_out_and_reads_clearly(
    browser: Browser, server: Server
) -> None:
    context = login(browser, server, "olga")
    page = context.new_page()
    page.goto("/api/v1/docs")
    operation = page.locator(".opblock-summary-path", has_text="/api/v1/workflows/expense_approval/runs")
    expect(operation).to_be_visible()
    assert page.evaluate(LOW_CONTRAST) == []
    operation.click()  # unfolded: "Try it out" is offered, and nothing can be sent before it
    block = page.locator(".opblock.is-open")
    expect(block.get_by_role("button", name="Try it out")).to_be_visible()
    expect(block.get_by_role("button", name="Execute")).to_have_count(0)
    assert page.evaluate(LOW_CONTRAST) == []
    page.get_by_role("link", name="Back to the dashboard").click()
    page.wait_for_url(server.url + "/")
    context.close()


def test_a_new_token_has_a_copy_button(browser: Browser, server: Server) -> None:
    context = login(browser, server, "vera")
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.url)
    page = context.new_page()
    page.goto("/api/tokens/")
    page.get_by_label("What it is for").fill("copied")
    page.get_by_role("button", name="Create token").click()
    token = page.locator("#new-token").inner_text()
    page.get_by_role("button", name="Copy").click()
    expect(page.locator("#new-token-copied")).to_have_text("Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == token
    context.close()


def _background(page: Page) -> str:
    return str(page.evaluate("() => getComputedStyle(document.body).backgroundColor"))


LIGHT_BG, DARK_BG = "rgb(245, 246, 248)", "rgb(14, 16, 20)"


def test_a_dark_theme_chosen_beside_following_the_system_is_kept(browser: Browser, server: Server) -> None:
    for system, other, other_bg, system_bg in (
        ("light", "Dark", DARK_BG, LIGHT_BG),
        ("dark", "Light", LIGHT_BG, DARK_BG),
    ):
        context = login(browser, server, "olga", system)
        page = open_page(context, "/runs/")
        choice = page.get_by_label("Theme")
        expect(choice).to_have_value("system")
        assert _background(page) == system_bg
        choice.select_option(label=other)
        page.wait_for_function(f"() => getComputedStyle(document.body).backgroundColor === {other_bg!r}")
        again = open_page(context, "/")  # kept: another page, drawn in it from the start
        assert _background(again) == other_bg
        expect(again.get_by_label("Theme")).to_have_value(other.lower())
        again.get_by_label("Theme").select_option(label="Follow the system")
        again.wait_for_function(f"() => getComputedStyle(document.body).backgroundColor === {system_bg!r}")
        context.close()


def test_the_timeline_can_show_peoples_events_only(browser: Browser, server: Server) -> None:
    run = expense(server, "Petra", amount=300, user="olga")
    shown = server.manage("wf", "show", run)
    interrupt_id = json.loads(shown)["pending"][0]["id"]
    server.answer(run, interrupt_id, {"approved": True, "comment": "ok"}, "piet")
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run}/")
    entries = page.locator("#timeline > li[id^='event-']")
    expect(page.locator("#run-status")).to_have_text("completed")
    everything = entries.count()
    page.get_by_label("People's events only").check()
    visible = page.locator("#timeline > li[id^='event-']:visible")
    expect(visible).to_have_count(2)  # olga started it, piet answered
    expect(visible.nth(0)).to_contain_text("olga")
    expect(visible.nth(1)).to_contain_text("Answered by piet")
    assert everything > 2
    page.get_by_label("People's events only").uncheck()
    expect(page.locator("#timeline > li[id^='event-']:visible")).to_have_count(everything)
    context.close()
