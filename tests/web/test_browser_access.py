"""Per-workflow permissions in real Chromium against `manage.py serve`: a user sees nothing of a
workflow they may not view, neither on reload nor live, while its group's member sees it all."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.web.test_browser import Server, item, launched_chromium, login, open_page, serving

RULES = """
from django.contrib.auth.models import Group, User
from wfapp.models import WorkflowAccess
payables = Group.objects.get_or_create(name="payables")[0]
WorkflowAccess.objects.create(workflow="expense_approval", group=payables, may_start=True, may_answer=True)
fin = User.objects.create_user("fin", password="pw-fin")
fin.groups.add(payables)
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser-access")) as live:
        live.manage("shell", "-c", RULES)
        yield live


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with launched_chromium() as launched:
        yield launched


def test_another_user_does_not_see_what_they_may_not_view(browser: Browser, server: Server) -> None:
    first = server.start_run(
        "expense_approval",
        {"employee": "Ines", "amount": 400, "category": "meals", "description": "Team lunch"},
    )
    fin, olga = login(browser, server, "fin"), login(browser, server, "olga")  # olga: every global permission
    fin_inbox, olga_inbox = open_page(fin, "/"), open_page(olga, "/")
    expect(item(fin_inbox, "Ines")).to_have_count(1)
    expect(olga_inbox.locator(".inbox-item", has_text="Ines")).to_have_count(0)
    # A question that arrives while both inboxes are open reaches only the one who may answer it.
    server.start_run(
        "expense_approval", {"employee": "Jonas", "amount": 600, "category": "travel", "description": "Train"}
    )
    expect(item(fin_inbox, "Jonas")).to_have_count(1)
    olga_inbox.wait_for_timeout(1000)
    expect(olga_inbox.locator(".inbox-item", has_text="Jonas")).to_have_count(0)
    # Runs: not listed, and their pages are 404.
    runs = open_page(olga, "/runs/")
    expect(runs.locator(f"a[href='/runs/{first['run']}/']")).to_have_count(0)
    response = olga.new_page().goto(f"/runs/{first['run']}/")
    assert response is not None and response.status == 404
    page = open_page(fin, f"/runs/{first['run']}/")
    expect(page.locator("h1")).to_contain_text("expense_approval")
    # A workflow without rules is unchanged for her.
    other = server.start_run("document_review", {"title": "Memo", "topic": "rules"})
    expect(item(open_page(olga, "/"), "Memo")).to_have_count(1)
    assert (olga.new_page().goto(f"/runs/{other['run']}/") or pytest.fail("no response")).status == 200
    fin.close()
    olga.close()
