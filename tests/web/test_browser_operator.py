"""An operator's day in real Chromium: races, live pages, actors, the keyboard and a 375 px phone.

Same serving subprocess as `test_browser.py`; runs needing a state are started with the CLI
(`manage.py wf ...`), a process of its own, as an operator's script would. A page whose live
updates must not arrive in time gets a websocket that Playwright holds (it never reaches the
server): the page believes it is live, and nothing closes its cards.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, WebSocketRoute, expect

from tests.web.test_browser import PHONE, Server, expense, item, login, open_page, phone, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-operator")) as live:
        yield live


def deaf_page(context: BrowserContext, path: str) -> Page:
    """A page whose socket opens but hears nothing: live updates never reach it."""
    page = context.new_page()

    def hold(socket: WebSocketRoute) -> None:  # never connected to the server
        socket.on_message(lambda message: None)

    page.route_web_socket(re.compile(r"/ws/"), hold)
    page.goto(path)
    page.wait_for_function("() => window.htmx !== undefined")
    return page


def test_a_lost_race_keeps_the_question_the_draft_and_the_winners_answer(
    browser: Browser, server: Server
) -> None:
    run = expense(server, "Lena")
    olga, piet = login(browser, server, "olga"), login(browser, server, "piet")
    late = deaf_page(piet, "/?q=Lena")
    card = item(late, "Lena")
    card.get_by_label("Comment").fill("Fine, but book earlier next time")
    olga_inbox = open_page(olga, "/?q=Lena")
    item(olga_inbox, "Lena").get_by_label("Comment").fill("Over the travel budget")
    item(olga_inbox, "Lena").get_by_role("button", name="Reject").click()
    expect(olga_inbox.locator(".inbox-item.answered")).to_contain_text("Answered by olga")

    card.get_by_role("button", name="Approve").click()
    closed = late.locator(".inbox-item.kept-draft")
    expect(closed.locator(".notice.conflict")).to_contain_text(
        re.compile(
            r"Already answered by olga at \d\d:\d\d:\d\d UTC: Rejected · Comment: Over the travel budget"
        )
    )
    expect(closed.locator(".notice.conflict")).to_contain_text("your answer below was not recorded")
    expect(closed.locator(".message")).to_contain_text("Manager approval")  # the question stays
    expect(closed.locator(".payload")).to_contain_text("Lena")  # and its details
    draft = closed.get_by_label("Comment")
    expect(draft).to_have_value("Fine, but book earlier next time")
    expect(draft).to_be_disabled()
    expect(closed.locator("button:enabled")).to_have_count(0)
    # Focus went on (the answered form is gone): to the card itself, the only one here.
    expect(closed).to_be_focused()
    shown = json.loads(server.manage("wf", "show", run))
    assert shown["answered"][0]["answer"] == {"approved": False, "comment": "Over the travel budget"}
    olga.close()
    piet.close()


def test_the_question_page_loses_a_race_on_a_phone_keeping_the_draft(
    browser: Browser, server: Server
) -> None:
    run = expense(server, "Mads")
    olga = login(browser, server, "olga")
    pk = item(open_page(olga, "/?q=Mads"), "Mads").get_attribute("id").removeprefix("interrupt-")
    piet = phone(browser, server, "piet")
    late = deaf_page(piet, f"/interrupts/{pk}/")
    late.get_by_label("Comment").fill("Approved for the fair")
    server.answer(run, "manager-approval", {"approved": True}, user="olga")
    late.get_by_role("button", name="Reject").click()
    card = late.locator(f"#interrupt-{pk}")
    expect(card.locator(".notice.conflict")).to_contain_text("Already answered by olga")
    expect(card.locator(".notice.conflict")).to_contain_text("Approved")
    expect(card.get_by_label("Comment")).to_have_value("Approved for the fair")
    expect(card.get_by_label("Comment")).to_be_disabled()
    assert late.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]
    olga.close()
    piet.close()


def test_the_question_page_closes_live_keeping_what_was_typed(browser: Browser, server: Server) -> None:
    run = expense(server, "Nora")
    olga, piet = login(browser, server, "olga"), login(browser, server, "piet")
    pk = item(open_page(olga, "/?q=Nora"), "Nora").get_attribute("id").removeprefix("interrupt-")
    direct = open_page(piet, f"/interrupts/{pk}/")
    direct.get_by_label("Comment").fill("Let me check the receipts")
    server.answer(run, "manager-approval", {"approved": True}, user="olga")
    card = direct.locator(f"#interrupt-{pk}")
    expect(card.locator(".closed-status")).to_contain_text("Answered by olga")
    expect(card.locator(".closed-status")).to_contain_text("your draft was not sent")
    expect(card.get_by_label("Comment")).to_have_value("Let me check the receipts")
    expect(card.get_by_role("button", name="Approve")).to_be_disabled()
    olga.close()
    piet.close()


def test_the_runs_list_shows_runs_the_cli_starts_and_cancels_live(browser: Browser, server: Server) -> None:
    olga = login(browser, server, "olga")
    runs = open_page(olga, "/runs/")
    run = expense(server, "Olle", user="piet")
    row = runs.locator(f"#run-row-{run}")
    expect(row).to_have_count(1)
    expect(row).to_contain_text("waiting")
    expect(row.locator('td[data-label="By"]')).to_have_text("piet")
    server.manage("wf", "cancel", run, "--user", "piet")
    expect(row.locator(".status")).to_have_text("cancelled")
    expect(row).to_contain_text("by piet")
    expect(runs.locator(f"#run-row-{run}")).to_have_count(1)  # updated in place, never twice
    olga.close()


def test_a_run_page_that_completes_live_asks_nothing_more(browser: Browser, server: Server) -> None:
    run = expense(server, "Pia", user="olga")
    olga = login(browser, server, "olga")
    page = open_page(olga, f"/runs/{run}/")
    expect(page.locator("#asks-title")).to_have_text("Waiting for an answer")
    server.answer(run, "manager-approval", {"approved": True}, user="piet")
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#asks-title")).to_have_text("Questions")
    expect(page.get_by_text("Waiting for an answer")).to_have_count(0)
    expect(page.locator("#run-asks .inbox-item.answered")).to_contain_text("Answered by piet")
    # Who did what, on the timeline: who started the run, and who answered.
    expect(page.locator("#timeline")).to_contain_text("Run started by olga")
    expect(page.locator("#timeline")).to_contain_text("Answered by piet")
    olga.close()


def test_after_answering_by_keyboard_focus_goes_to_the_next_card_on_a_phone(
    browser: Browser, server: Server
) -> None:
    expense(server, "Quinn", amount=2500)  # manager and finance: two cards
    piet = phone(browser, server, "piet")
    inbox = open_page(piet, "/?q=Quinn")
    first, second = inbox.locator(".inbox-item").nth(0), inbox.locator(".inbox-item").nth(1)
    expect(second).to_be_visible()
    second_id = second.get_attribute("id")
    approve = first.get_by_role("button", name="Approve")
    for _ in range(40):
        inbox.keyboard.press("Tab")
        if approve.evaluate("el => el === document.activeElement"):
            break
    else:
        raise AssertionError("Approve is not reachable with Tab")
    inbox.keyboard.press("Enter")
    expect(inbox.locator(".inbox-item.answered")).to_have_count(1)
    expect(inbox.locator(f"#{second_id}")).to_be_focused()
    inbox.keyboard.press("Tab")  # on into that card, not back to the top of the page
    assert inbox.evaluate(f"() => !!document.activeElement.closest('#{second_id}')")
    piet.close()


def test_who_cancelled_shows_in_the_header_the_timeline_and_the_runs_list(
    browser: Browser, server: Server
) -> None:
    olga, piet = login(browser, server, "olga"), login(browser, server, "piet")
    start = open_page(olga, "/workflows/expense_approval/")
    start.get_by_label("Employee").fill("Runa")
    start.get_by_label("Amount").fill("700")
    start.get_by_label("travel").check()
    start.get_by_label("Description").fill("Bus")
    start.get_by_role("button", name="Start run").click()
    start.wait_for_url("**/runs/*/")
    run = start.url.rstrip("/").rsplit("/", 1)[-1]
    runs = open_page(olga, "/runs/")
    page = open_page(piet, f"/runs/{run}/")
    page.once("dialog", lambda dialog: dialog.accept())
    page.get_by_role("button", name="Cancel run").click()
    expect(page.locator("#run-head h1")).to_contain_text("cancelled by piet")
    expect(page.locator("#timeline")).to_contain_text("Run cancelled by piet")
    expect(page.locator("#timeline")).to_contain_text("Run started by olga")
    expect(page.locator("#run-result")).to_contain_text("Cancelled by piet")
    row = runs.locator(f"#run-row-{run}")
    expect(row).to_contain_text("cancelled by piet")  # live, on olga's open list
    expect(row.locator('td[data-label="By"]')).to_have_text("olga")
    olga.close()
    piet.close()


def test_a_phone_shows_the_runs_the_graph_and_a_question_on_the_first_screen(
    browser: Browser, server: Server
) -> None:
    run = expense(server, "Sami", amount=2500)
    piet = phone(browser, server, "piet")
    runs = open_page(piet, "/runs/")
    row = runs.locator(f"#run-row-{run}")
    for label in ("Run", "Workflow", "Status", "Started", "Updated", "By"):
        cell = row.locator(f'td[data-label="{label}"]').bounding_box()
        assert cell is not None and cell["x"] >= 0 and cell["x"] + cell["width"] <= PHONE["width"], label
    link = row.get_by_role("link").bounding_box()
    assert link is not None and link["height"] < 30  # the run id on one line, not in 3-character pieces
    assert runs.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]

    page = open_page(piet, f"/runs/{run}/")
    graph = page.locator("#run-graph > svg.wf-graph")
    natural = float(graph.get_attribute("width") or 0)
    shown = graph.bounding_box()
    assert shown is not None and shown["width"] >= natural - 1  # full size: labels stay readable
    box = page.locator("#run-graph")
    assert box.evaluate("el => el.scrollWidth > el.clientWidth")  # it scrolls sideways in its box
    box.focus()  # and the keyboard scrolls it too
    page.keyboard.press("ArrowRight")
    expect(box).to_be_focused()
    assert page.evaluate("() => document.documentElement.scrollWidth") <= PHONE["width"]

    inbox = open_page(piet, "/")
    first = inbox.locator(".inbox-item").first.bounding_box()
    assert first is not None and first["y"] < PHONE["height"] - 120  # a question starts on the first screen
    piet.close()


def test_timeline_times_are_the_viewers_with_utc_on_hover_and_details_read_as_words(
    browser: Browser, server: Server
) -> None:
    run = expense(server, "Tove")
    server.manage(
        "wf", "answer", run, "manager-approval", "--answer", '{"approved": true, "comment": "Agreed"}', "--user", "olga"
    )  # fmt: skip
    tokyo = login(browser, server, "olga", timezone_id="Asia/Tokyo")  # UTC+9, all year
    page = open_page(tokyo, f"/runs/{run}/")
    expect(page.locator("#timeline-zone")).to_contain_text("Asia/Tokyo")
    first = page.locator("#timeline time").first
    # The moment with its offset: the page is rendered in the viewer's zone (the wfapp_tz cookie).
    moment = datetime.fromisoformat(first.get_attribute("datetime") or "")
    assert moment.utcoffset() is not None
    utc = moment.astimezone(UTC)
    there = utc + timedelta(hours=9)
    expect(first).to_have_text(re.compile(rf"(\d{{4}}-\d\d-\d\d )?{there:%H:%M:%S}$"))
    expect(first).to_have_attribute("title", re.compile(rf"{utc:%Y-%m-%d %H:%M:%S} UTC$"))

    answer = page.locator("#timeline li.kind-answer")
    answer.locator("summary").first.click()
    expect(answer.locator("dl.values")).to_contain_text("Comment")
    expect(answer.locator("dl.values")).to_contain_text("Agreed")
    expect(answer.locator("dl.values")).not_to_contain_text("{")  # words, the JSON is apart
    expect(answer.locator("details.raw pre")).to_be_hidden()  # folded under "As JSON"
    answer.get_by_text("As JSON").click()
    expect(answer.locator("details.raw pre")).to_contain_text('"comment": "Agreed"')
    tokyo.close()


def test_small_things_bullets_labels_and_the_admins_icon(browser: Browser, server: Server) -> None:
    items = [{"sku": f"SMALL-{i}", "price": 5, "flagged": True} for i in range(2)]
    server.manage("wf", "start", "batch_review", "--input", json.dumps({"items": items}))
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?workflow=batch_review&q=SMALL")
    expect(inbox.locator(".inbox-item")).to_have_count(2)
    expect(inbox.locator(".inbox-item .payload").first).to_contain_text("SKU")
    for box in inbox.locator(".bulk-select input").all():
        box.check()
    inbox.get_by_role("button", name="Approve selected").click()
    results = inbox.locator("#bulk-results ul")
    expect(results.locator("li.ok")).to_have_count(2)
    # The bullets sit inside the result box: each line starts well inside it.
    inset = results.evaluate(
        "ul => ul.querySelector('li').getBoundingClientRect().left - ul.getBoundingClientRect().left"
    )
    assert inset >= 20

    start = open_page(context, "/workflows/batch_review/")
    start.get_by_role("button", name="Add item").click()
    expect(start.locator("#start-form")).to_contain_text("SKU")
    expect(start.locator("#start-form")).not_to_contain_text("Sku")

    server.manage(
        "shell", "-c", "from django.contrib.auth.models import User; "
        "User.objects.filter(username='admin-icon').exists() or "
        "User.objects.create_superuser('admin-icon', password='pw-admin-icon')",
    )  # fmt: skip
    admin = login(browser, server, "admin-icon")
    page = admin.new_page()
    missing: list[str] = []
    page.on("response", lambda r: missing.append(r.url) if r.status == 404 else None)
    page.goto("/admin/")
    icon = page.locator('link[rel="icon"]')
    expect(icon).to_have_count(1)
    response = page.request.get(server.url + (icon.get_attribute("href") or ""))
    assert response.status == 200
    page.wait_for_load_state("networkidle")
    assert missing == []
    admin.close()
    context.close()
