"""The agent demo in real Chromium: edit a refund in the approval form, watch the transcript live."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import SHOTS, Server, launched_chromium, login, open_page, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-agent")) as live:
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched_chromium() as launched:
        yield launched


def test_an_edited_refund_is_approved_and_the_transcript_follows_live(
    browser: Browser, server: Server
) -> None:
    run = server.start_run(
        "support_triage", {"customer": "Ada", "order_id": "A100", "message": "My kettle arrived broken."}
    )
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    transcript = page.locator("#run-transcripts")
    expect(transcript).to_contain_text("scripted model")
    expect(transcript).to_contain_text("Asked to approve issue_refund")

    card = page.locator("#run-asks .inbox-item", has_text="issue_refund")
    amount = card.get_by_label("Amount")
    expect(amount).to_have_value("39.0")
    amount.fill("20")
    card.get_by_role("button", name="Approve").click()

    expect(page.locator("#run-status")).to_have_text("completed")
    expect(transcript).to_contain_text("Answered by olga")
    expect(transcript).to_contain_text("Refunded 20.00 on order A100")
    expect(transcript.locator(".line-output")).to_contain_text("Good news")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / "agent-transcript.png"), full_page=True)
    context.close()
