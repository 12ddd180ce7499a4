"""Agents in real Chromium: edit a refund in the approval form, watch the transcript and the text stream live."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import SHOTS, Server, login, open_page, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-agent"), "tests.web.flows:streaming") as live:
        yield live


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


def test_the_model_text_streams_into_the_transcript_as_it_arrives(
    browser: Browser, server: Server, tmp_path: Path
) -> None:
    run = server.start_run("web_streaming", {"gates": str(tmp_path)})  # waits for the go-ahead
    context = login(browser, server, "olga")
    page = open_page(context, f"/runs/{run['run']}/")
    page.locator("#run-asks .inbox-item", has_text="narrator").get_by_role("button", name="Approve").click()

    live = page.locator("#run-transcripts .line-live .said")
    expect(page.locator("#run-transcripts")).to_contain_text("waiting for the model")
    expect(live).to_have_text("")
    (tmp_path / "0").touch()
    expect(live).to_have_text("Once ")
    (tmp_path / "1").touch()
    expect(live).to_have_text("Once upon ")  # the step is still in flight: nothing recorded yet
    expect(page.locator("#run-status")).to_have_text("running")
    (tmp_path / "2").touch()

    expect(page.locator("#run-status")).to_have_text("completed")
    expect(live).to_have_count(0)  # the recorded answer took the live line's place
    expect(page.locator("#run-transcripts .line-assistant")).to_have_text(re.compile("Once upon a <time>."))
    context.close()
