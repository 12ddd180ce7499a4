"""The API docs page in real Chromium: it renders the operations and loads nothing from elsewhere."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, login, serving


@pytest.fixture(autouse=True)
def _close_thread_connections() -> None:
    """Nothing to close here (the server is another process), and Playwright's sync API must
    not meet the async fixture of that name while its own loop runs."""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("docs")) as live:
        yield live


def test_the_docs_page_renders_from_local_files_only(browser: Browser, server: Server) -> None:
    context = login(browser, server, "olga")
    page = context.new_page()
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    page.goto("/api/v1/docs")
    expect(
        page.locator(".opblock-summary-path", has_text="/api/v1/interrupts/{question_id}/answer")
    ).to_be_visible()
    expect(
        page.locator(".opblock-summary-path", has_text="/api/v1/workflows/expense_approval/runs")
    ).to_be_visible()
    expect(page.get_by_text("wfapp API")).to_be_visible()
    assert requested and all(url.startswith(server.url + "/") for url in requested), requested
    assert any(url.endswith("/api/v1/openapi.json") for url in requested)
    context.close()


def test_the_tokens_page_is_in_the_navigation(browser: Browser, server: Server) -> None:
    context = login(browser, server, "vera")
    page = context.new_page()
    page.goto("/")
    page.get_by_role("link", name="API").click()
    page.get_by_label("What it is for").fill("my script")
    page.get_by_role("button", name="Create token").click()
    token = page.locator("#new-token").inner_text()
    assert token.startswith("wfa_")
    page.get_by_role("link", name="Back to your tokens").click()  # shown once, on its own page
    expect(page.get_by_text(token)).to_have_count(0)
    page.get_by_role("button", name="Revoke my script").click()
    expect(page.get_by_role("cell", name="revoked", exact=False)).to_be_visible()
    context.close()
