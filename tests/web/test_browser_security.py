"""Security in real Chromium against `manage.py serve`: the CSP, an ended session, login lockout.

Same serving subprocess as `test_browser.py` (Daphne, websockets and the runtime in one
process); the policy is the one both profiles send.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, ConsoleMessage, Page, expect

from tests.web.test_browser import TIMEOUT, Server, item, login, open_page, serving

# Collects the page's CSP violation reports (an init script runs before the page's own scripts).
WATCH_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__cspViolations.push(e.violatedDirective + " " + (e.blockedURI || "inline") + " " + e.sourceFile + ":" + e.lineNumber);
});
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-security")) as live:
        live.manage(
            "shell",
            "-c",
            "from django.contrib.auth.models import User; User.objects.create_superuser('root', '', 'pw-root')",
        )
        yield live


class Console:
    """Every console message and CSP violation of a context's pages."""

    def __init__(self, context: BrowserContext) -> None:
        self.messages: list[str] = []
        self.pages: list[Page] = []
        context.add_init_script(WATCH_VIOLATIONS)
        context.on("console", self._message)
        context.on("page", lambda page: self.pages.append(page))

    def _message(self, message: ConsoleMessage) -> None:
        self.messages.append(f"{message.type}: {message.text}")

    def violations(self) -> list[str]:
        found = [m for m in self.messages if "Content Security Policy" in m or "Refused to" in m]
        for page in self.pages:
            if not page.is_closed():
                found += page.evaluate("() => window.__cspViolations || []")
        return found


def _logged_in_context(browser: Browser, server: Server, username: str) -> tuple[BrowserContext, Console]:
    context = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(TIMEOUT)
    console = Console(context)
    page = context.new_page()
    response = page.goto("/login/")
    assert response is not None
    policy = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"pw-{username}")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url + "/")
    return context, console


def test_every_page_works_under_the_policy_without_a_violation(browser: Browser, server: Server) -> None:
    context, console = _logged_in_context(browser, server, "olga")
    # Start from the form (an htmx POST answered with HX-Redirect), then watch the run live.
    page = open_page(context, "/workflows/expense_approval/")
    page.get_by_label("Employee").fill("Csilla")
    page.get_by_label("Amount").fill("500")
    page.get_by_label("meals").check()
    page.get_by_label("Description").fill("Team lunch")
    page.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    expect(page.locator("#run-status")).to_have_text("waiting")

    # piet decides: olga filed it, and a requester never approves their own run (four-eyes).
    deciding, deciders_console = _logged_in_context(browser, server, "piet")
    inbox = open_page(deciding, "/?q=Csilla")
    item(inbox, "Csilla").get_by_label("Comment").fill("Fine")
    item(inbox, "Csilla").get_by_role("button", name="Approve").click()
    expect(inbox.locator(".inbox-item.answered")).to_contain_text("Answered by piet")
    expect(page.locator("#run-status")).to_have_text("completed")  # over the websocket
    expect(page.locator("#timeline")).to_contain_text("Answered by piet")
    assert deciders_console.violations() == []
    deciding.close()

    runs = open_page(context, "/runs/")
    runs.get_by_label("Status").select_option("completed")  # the filter form's htmx GET
    expect(runs.locator("#runs-list")).to_contain_text("expense_approval")
    open_page(context, "/workflows/")
    assert console.violations() == []
    context.close()


def test_the_admin_works_under_the_policy(browser: Browser, server: Server) -> None:
    context, console = _logged_in_context(browser, server, "root")
    page = context.new_page()
    page.goto("/admin/")
    expect(page.locator("#content-main")).to_contain_text("Answer attempts")
    page.goto("/admin/wfapp/session/")
    expect(page.locator("#changelist")).to_be_visible()
    page.goto("/admin/auth/user/1/change/")
    expect(page.locator("#user_form")).to_be_visible()
    assert console.violations() == []
    context.close()


def _pending(server: Server, run: dict[str, Any]) -> list[str]:
    return [ask["id"] for ask in json.loads(server.manage("wf", "show", run["run"]))["pending"]]


def test_a_draft_survives_the_session_ending(browser: Browser, server: Server) -> None:
    run = server.start_run(
        "expense_approval", {"employee": "Dagny", "amount": 500, "category": "meals", "description": "Dinner"}
    )
    context = login(browser, server, "olga")
    console = Console(context)
    inbox = open_page(context, "/?q=Dagny")
    item(inbox, "Dagny").get_by_label("Comment").fill("Checked the receipt twice")
    context.clear_cookies(name="sessionid")  # the session ends while the page is open

    item(inbox, "Dagny").get_by_role("button", name="Approve").click()
    inbox.wait_for_url(
        re.compile(r"/login/\?next=/%3Fq%3DDagny$")
    )  # the whole page went to log in, no card swapped
    assert _pending(server, run) == ["manager-approval"]
    inbox.get_by_label("Username").fill("olga")
    inbox.get_by_label("Password").fill("pw-olga")
    inbox.get_by_role("button", name="Log in").click()
    inbox.wait_for_url(server.url + "/?q=Dagny")

    card = item(inbox, "Dagny")
    expect(card.get_by_label("Comment")).to_have_value("Checked the receipt twice")
    expect(card.locator(".draft-restored")).to_contain_text("It has not been sent.")
    assert _pending(server, run) == ["manager-approval"]  # nothing was sent by itself
    card.get_by_role("button", name="Approve").click()
    expect(inbox.locator(".inbox-item.answered")).to_contain_text("Answered by olga")
    shown = json.loads(server.manage("wf", "show", run["run"]))
    assert shown["answered"][0]["answer"]["comment"] == "Checked the receipt twice"
    assert console.violations() == []
    context.close()


def test_login_locks_out_through_the_real_server(browser: Browser, server: Server) -> None:
    context = browser.new_context(base_url=server.url)
    context.set_default_timeout(TIMEOUT)
    page = context.new_page()
    for attempt in range(5):  # WFAPP_LOGIN_FAILURE_LIMIT's default
        page.goto("/login/")
        page.get_by_label("Username").fill("vera")
        page.get_by_label("Password").fill(f"wrong {attempt}")
        page.get_by_role("button", name="Log in").click()
    expect(page.locator("#locked-out")).to_contain_text("Too many failed logins")
    page.goto("/login/")
    page.get_by_label("Username").fill("vera")
    page.get_by_label("Password").fill("pw-vera")
    page.get_by_role("button", name="Log in").click()
    expect(page.locator("#locked-out")).to_be_visible()
    assert page.goto("/").url.startswith(server.url + "/login/")  # not logged in
    server.manage("axes_reset")
    page.goto("/login/")
    page.get_by_label("Username").fill("vera")
    page.get_by_label("Password").fill("pw-vera")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url + "/")
    context.close()
