"""axe-core on every page a person uses, in real Chromium (issue 27: "axe-core reports no
violation on any page including the API docs").

axe-core's script comes inside the `axe-playwright-python` package (nothing is fetched at run
time); every rule axe runs by default is checked, whatever its impact. Pages are checked in the
state a person sees them: the inbox as cards and as a list with a card open, in the light and the
dark theme; a question page; runs waiting, completed and failed (its failures), with the compare
panel open; the start form; the workflows; the token pages; the saved filters; the login page;
the admin; the API docs. Same serving subprocess as `test_browser.py`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import pytest
from axe_playwright_python.sync_playwright import Axe
from playwright.sync_api import Browser, BrowserContext, Page, expect

from tests.web.test_browser import TIMEOUT, Server, expense, item, login, open_page, serving

AXE = Axe()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(
        tmp_path_factory.mktemp("browser-axe"), "tests.web.flows:broken,tests.web.flows:tally"
    ) as live:
        live.manage(
            "shell", "-c", "from django.contrib.auth.models import User\n"
            "User.objects.create_superuser('ada', 'ada@example.com', 'pw-ada')",
        )  # fmt: skip
        yield live


def violations(page: Page, where: str) -> list[str]:
    """axe's violations on the page as it is now, one line each: where, rule, impact, elements."""
    results = AXE.run(page)
    return [
        f"{where}: {v['id']} ({v['impact']}) {v['help']}: "
        + "; ".join(" ".join(map(str, node["target"])) for node in v["nodes"])
        for v in results.response["violations"]
    ]


def _visit(context: BrowserContext, path: str, live: bool = True) -> Page:
    if live:
        return open_page(context, path)
    page = context.new_page()
    page.goto(path)
    page.wait_for_load_state("load")
    return page


def _checked(context: BrowserContext, path: str, where: str, live: bool = True) -> list[str]:
    page = _visit(context, path, live)
    found = violations(page, where)
    page.close()
    return found


def _runs(server: Server) -> dict[str, str]:
    """A run waiting for a manager, one on a quorum of two finance approvals (one given), one
    completed, one failed, one whose events the compare panel shows."""
    waiting = expense(server, "Axel", amount=700)
    quorum = str(
        server.start_run(
            "expense_approval",
            {"employee": "Quinn", "amount": 25000, "category": "equipment", "description": "Racks"},
        )["run"]
    )
    server.answer(quorum, "manager-approval", {"approved": True}, "olga")
    server.answer(quorum, "finance-approval", {"approved": True}, "piet")
    done = expense(server, "Dana", amount=300)
    server.answer(done, "manager-approval", {"approved": True}, "piet")
    failed = str(server.start_run("web_broken", {})["run"])
    tally = str(server.start_run("web_tally", {})["run"])
    return {"waiting": waiting, "quorum": quorum, "done": done, "failed": failed, "tally": tally}


def _status(server: Server, run: str) -> str:
    return str(json.loads(server.manage("wf", "show", run))["status"])


def test_an_operators_pages_have_no_axe_violation_in_either_theme(browser: Browser, server: Server) -> None:
    runs = _runs(server)
    found: list[str] = []
    for scheme in ("light", "dark"):
        olga = login(browser, server, "olga", scheme)
        cards = open_page(olga, "/?view=cards")
        expect(item(cards, "Axel")).to_be_visible()
        expect(item(cards, "Finance approval: Quinn")).to_contain_text("1 of 2 approvals")
        found += violations(cards, f"inbox, cards ({scheme})")
        cards.keyboard.press("?")
        expect(cards.locator("#keys-help")).to_be_visible()
        found += violations(cards, f"inbox, the keys' help ({scheme})")
        cards.close()

        listed = open_page(olga, "/?view=list")
        found += violations(listed, f"inbox, list ({scheme})")
        listed.locator(".row-line", has_text="Axel").click()
        expect(item(listed, "Axel").get_by_role("button", name="Approve")).to_be_visible()
        found += violations(listed, f"inbox, list with a card open ({scheme})")
        listed.close()
        found += _checked(olga, f"/runs/{runs['waiting']}/", f"a waiting run ({scheme})")
        olga.close()

    olga = login(browser, server, "olga")
    inbox = open_page(olga, "/?view=cards")
    question = item(inbox, "Axel").locator("a.question-link").get_attribute("href")
    inbox.close()
    assert question
    found += _checked(olga, question, "a question page")
    found += _checked(olga, "/runs/", "runs list")
    found += _checked(olga, "/runs/?status=failed", "runs list, failed only")
    found += _checked(olga, f"/runs/{runs['quorum']}/", "a run waiting on a quorum")
    assert _status(server, runs["done"]) == "completed"
    found += _checked(olga, f"/runs/{runs['done']}/", "a completed run")
    assert _status(server, runs["failed"]) == "failed"
    failed = open_page(olga, f"/runs/{runs['failed']}/")
    failed.locator("#run-failures details.traceback summary").first.click()
    failed.locator("#run-failures details.retry-edit summary").first.click()
    found += violations(failed, "a failed run, its failures unfolded")
    failed.close()

    tally = open_page(olga, f"/runs/{runs['tally']}/")
    events = tally.locator("#timeline > li", has_text="Output").locator("a.seq-link")
    expect(events).to_have_count(2)
    events.first.click()
    panel = tally.locator("#run-compare")
    expect(panel.locator("h2")).to_contain_text("State as of")
    panel.get_by_label(re.compile("Compare:")).check()
    events.last.click()
    expect(panel.locator("h2")).to_contain_text("Changes from")
    found += violations(tally, "the compare panel")
    tally.close()

    found += _checked(olga, "/workflows/", "workflows")
    found += _checked(olga, "/workflows/expense_approval/", "a workflow page and its start form")
    start = open_page(olga, "/workflows/expense_approval/")
    start.locator("#start-form").evaluate("form => { form.noValidate = true; }")  # the server's check
    start.get_by_role("button", name="Start run").click()  # empty: the form's errors shown
    expect(start.locator(".errors").first).to_be_visible()
    found += violations(start, "the start form with its errors")
    start.close()

    saved = open_page(olga, "/runs/?status=waiting")
    saved.get_by_text("Save these filters", exact=True).click()
    saved.get_by_label("Save these filters as").fill("Waiting runs")
    saved.get_by_role("button", name="Save filter").click()
    expect(saved.locator("#saved-filters .saved-list")).to_contain_text("Waiting runs")
    found += violations(saved, "saved filters")
    saved.close()

    tokens = _visit(olga, "/api/tokens/", live=False)
    found += violations(tokens, "the token page")
    tokens.get_by_label("What it is for").fill("axe")
    tokens.get_by_role("button", name="Create token").click()
    expect(tokens.locator("#new-token")).to_be_visible()
    found += violations(tokens, "a new token")
    tokens.close()

    docs = _visit(olga, "/api/v1/docs", live=False)
    operation = docs.locator(".opblock-summary-path", has_text="/api/v1/workflows/expense_approval/runs")
    expect(operation).to_be_visible()
    found += violations(docs, "the API docs")
    operation.click()
    expect(docs.locator(".opblock.is-open").get_by_role("button", name="Try it out")).to_be_visible()
    found += violations(docs, "the API docs, an operation unfolded")
    docs.close()
    olga.close()
    assert found == [], "\n".join(found)


def test_the_login_page_and_the_admin_have_no_axe_violation(browser: Browser, server: Server) -> None:
    found: list[str] = []
    for scheme in ("light", "dark"):
        anonymous = browser.new_context(base_url=server.url, color_scheme=scheme)
        anonymous.set_default_timeout(TIMEOUT)
        found += _checked(anonymous, "/login/", f"the login page ({scheme})", live=False)
        anonymous.close()

    ada = login(browser, server, "ada")
    found += _checked(ada, "/", "an administrator's inbox")
    for path, where in (
        ("/admin/", "the admin's index"),
        ("/admin/wfapp/session/", "the admin's runs"),
        ("/admin/auth/group/", "the admin's groups"),
        ("/admin/auth/user/", "the admin's users"),
    ):
        found += _checked(ada, path, where, live=False)
    ada.close()
    assert found == [], "\n".join(found)
