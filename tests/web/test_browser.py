"""Whole flows in real Chromium (Playwright) against `manage.py serve` on a file-based SQLite.

The server runs in a subprocess exactly as `make run` serves (Daphne, websockets, the runtime
in one loop); runs that need a particular state are started with `manage.py wf start`. These
tests need Chromium: they fail, never skip, when it is missing.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
SHOTS = Path(os.environ.get("WFAPP_SCREENSHOTS", ROOT / "var" / "screenshots"))
USERS = {"olga": True, "piet": True, "vera": False}
TIMEOUT = 15_000
expect.set_options(timeout=TIMEOUT)  # the machine is shared: wait for conditions, generously


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _chromium() -> str:
    path = os.environ.get("WFAPP_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        raise RuntimeError("Chromium is needed for the browser tests: apt-get install chromium")
    return path


class Server:
    """A serving subprocess and a way to run `manage.py` commands against its database."""

    def __init__(self, data_dir: Path) -> None:
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.env = {
            **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
            "DJANGO_SETTINGS_MODULE": "wfapp.settings.embedded",
            "WFAPP_DATA_DIR": str(data_dir),
            "PYTHONUNBUFFERED": "1",
            "WFAPP_UNDO_SECONDS": "1",  # keys and bulk answers wait this long for Undo
        }
        self.data_dir = data_dir
        self.log = (data_dir / "serve.log").open("w")
        self.process: subprocess.Popen[bytes] | None = None

    def manage(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "manage.py", *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=300,  # a loaded machine runs Django commands slowly: wait, do not fail
        )
        if done.returncode != 0:
            raise RuntimeError(f"manage.py {' '.join(args)} failed: {done.stderr}")
        return done.stdout

    def start(self) -> None:
        """Serve a copy of this process's prepared database (migrated, with ``USERS``)."""
        for part in _prepared_database().parent.glob("wfapp.sqlite3*"):
            shutil.copyfile(part, self.data_dir / part.name)
        self.serve()

    def prepare(self) -> None:
        """Migrate this server's database and add ``USERS``: once per test process."""
        self.manage("migrate", "-v0")
        script = "from django.contrib.auth.models import Group, User, Permission\n" + "".join(
            f"u = User.objects.create_user({name!r}, password='pw-{name}')\n"
            + (
                "u.user_permissions.add(*Permission.objects.filter(codename__in="
                "['answer_interrupt', 'start_run', 'cancel_run', 'retry_run', 'retry_with_edited_input']))\n"
                # the groups the expense demo assigns its questions to
                "u.groups.add(*Group.objects.filter(name__in=['managers', 'finance', 'directors']))\n"
                if may
                else ""
            )
            for name, may in USERS.items()
        )
        self.manage("shell", "-c", script)

    def add_people(self, people: dict[str, str], reassigners: tuple[str, ...] = ()) -> None:
        """Add users who answer and start runs, each in the group ``people`` names; ``reassigners``
        may also reassign questions. Their passwords are ``pw-<name>``, as ``login`` expects."""
        script = "from django.contrib.auth.models import Group, Permission, User\n" + "".join(
            f"u = User.objects.create_user({name!r}, password='pw-{name}')\n"
            "u.user_permissions.add(*Permission.objects.filter(codename__in=['answer_interrupt', 'start_run']))\n"
            f"u.groups.add(Group.objects.get(name={group!r}))\n"
            for name, group in people.items()
        )
        script += "".join(
            f"User.objects.get(username={name!r}).user_permissions.add("
            "Permission.objects.get(codename='reassign_interrupt'))\n"
            for name in reassigners
        )
        self.manage("shell", "-c", script)

    def serve(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(self.port)],
            cwd=ROOT, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 120  # a loaded machine starts Django slowly: wait, don't fail
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                with urllib.request.urlopen(self.url + "/login/", timeout=1) as response:
                    if response.status == 200:
                        return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"the server did not start; see {self.log.name}")

    def halt(self) -> None:
        if self.process is not None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            self.process = None

    def stop(self) -> None:
        self.halt()
        self.log.close()

    def start_run(self, workflow: str, node_input: Any, user: str | None = None) -> dict[str, Any]:
        by = ["--user", user] if user else []
        out = self.manage("wf", "start", workflow, "--input", json.dumps(node_input), *by)
        return dict(json.loads(out))

    def answer(self, run: str, interrupt_id: str, answer: Any, user: str) -> None:
        """Answer from the CLI, another process, as an operator's script would."""
        self.manage("wf", "answer", run, interrupt_id, "--answer", json.dumps(answer), "--user", user)


_PREPARED: list[Path] = []


def _prepared_database() -> Path:
    """A migrated database with ``USERS``, made once per test process (each xdist worker): each
    server starts on a copy of it instead of running ``migrate`` and ``shell`` again."""
    if not _PREPARED:
        folder = Path(tempfile.mkdtemp(prefix="wfapp-served-db-"))
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        template = Server(folder)
        try:
            template.prepare()
        finally:
            template.stop()
        _PREPARED.append(folder / "wfapp.sqlite3")
    return _PREPARED[0]


@contextlib.contextmanager
def serving(data_dir: Path, extra_workflows: str = "", **env: str) -> Iterator[Server]:
    """A serving subprocess on its own data folder, with test workflows next to the demos, and
    ``env`` (settings from the environment)."""
    live = Server(data_dir)
    live.env.update(env)
    if extra_workflows:
        live.env["WFAPP_EXTRA_WORKFLOWS"] = extra_workflows
    try:
        live.start()
        yield live
    finally:
        live.stop()


@contextlib.contextmanager
def launched_chromium() -> Iterator[Browser]:
    """Debian's Chromium under Playwright (never a downloaded browser)."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=_chromium())
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("browser")) as live:
        yield live


def login(
    browser: Browser, server: Server, username: str, scheme: str = "light", **options: Any
) -> BrowserContext:
    """A context logged in as `username`; `options` are Playwright's (a viewport, a time zone)."""
    context = browser.new_context(
        **{
            "base_url": server.url,
            "color_scheme": scheme,
            "viewport": {"width": 1280, "height": 900},
            **options,
        }
    )
    context.set_default_timeout(TIMEOUT)
    page = context.new_page()
    page.goto("/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(f"pw-{username}")
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(server.url + "/")
    page.close()
    return context


PHONE = {"width": 375, "height": 667}


def phone(browser: Browser, server: Server, username: str, scheme: str = "light") -> BrowserContext:
    """A logged-in context on a 375 px wide screen."""
    return login(browser, server, username, scheme, viewport=PHONE, is_mobile=True)


def expense(server: Server, employee: str, amount: int = 500, user: str | None = None) -> str:
    """Start an expense the manager decides (100 to 1,000) from the CLI; its run id."""
    node_input = {"employee": employee, "amount": amount, "category": "travel", "description": "Trip"}
    return str(server.start_run("expense_approval", node_input, user)["run"])


def open_waiting_run(context: BrowserContext, run: str) -> Page:
    """A run's page, open and live, once it shows the run waiting."""
    page = open_page(context, f"/runs/{run}/")
    expect(page.locator("#run-status")).to_have_text("waiting")
    return page


def open_page(context: BrowserContext, path: str) -> Page:
    page = context.new_page()
    page.add_init_script(HEARD)
    page.goto(path)
    # The page is live once its socket's hello was answered (with the badge, at least).
    page.wait_for_function("() => !!document.querySelector('#live') && window.wfappHeard > 0")
    return page


# Counts the socket's messages a page has received (htmx's ws extension: htmx:wsAfterMessage).
HEARD = (
    "window.wfappHeard = 0;"
    "document.addEventListener('htmx:wsAfterMessage', () => { window.wfappHeard += 1; });"
)


def item(page: Page, text: str) -> Any:
    return page.locator(".inbox-item:not(.answered)", has_text=text)


def test_expense_start_to_completion_live(browser: Browser, server: Server) -> None:
    """(a) start from the form over 1,000, watch it wait, answer both, watch it complete."""
    context = login(browser, server, "olga")
    errors: list[str] = []
    context.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page = open_page(context, "/workflows/expense_approval/")
    page.get_by_label("Employee").fill("Astrid")
    page.get_by_label("Amount").fill("1500")
    page.get_by_label("travel").check()
    page.get_by_label("Description").fill("Conference in Oslo")
    page.get_by_role("button", name="Start run").click()
    page.wait_for_url("**/runs/*/")
    expect(page.locator("#run-status")).to_have_text("waiting")
    expect(page.locator('[data-node="manager_approval"]')).to_have_attribute("data-status", "waiting")

    # piet decides: olga filed it, and a requester never approves their own run (four-eyes).
    deciding = login(browser, server, "piet")
    inbox = open_page(deciding, "/?q=Astrid")
    expect(inbox.locator(".inbox-item")).to_have_count(2)
    item(inbox, "Manager approval").get_by_role("button", name="Approve").click()
    expect(inbox.locator(".inbox-item.answered")).to_have_count(1)
    item(inbox, "Finance approval").get_by_label("Comment").fill("Within budget")
    item(inbox, "Finance approval").get_by_role("button", name="Approve").click()
    expect(inbox.locator(".inbox-item.answered")).to_have_count(2)

    # The run page was never reloaded: the socket brought every change.
    expect(page.locator("#run-status")).to_have_text("completed")
    expect(page.locator("#run-output")).to_contain_text("Within budget")
    expect(page.locator('[data-node="both_decide"]')).to_have_attribute("data-status", "completed")
    expect(page.locator("#timeline")).to_contain_text("Answered by piet")
    assert errors == []
    deciding.close()
    context.close()


def test_two_operators_first_answer_wins(browser: Browser, server: Server) -> None:
    """(b) one answers; the other's inbox and question page close the item live (a late submit is
    refused: test_browser_operator.py)."""
    run = server.start_run(
        "expense_approval", {"employee": "Bruno", "amount": 500, "category": "meals", "description": "Lunch"}
    )
    olga, piet = login(browser, server, "olga"), login(browser, server, "piet")
    piet_inbox = open_page(piet, "/?q=Bruno")
    expect(item(piet_inbox, "Bruno")).to_have_count(1)
    pk = item(piet_inbox, "Bruno").get_attribute("id").removeprefix("interrupt-")
    piet_direct = open_page(piet, f"/interrupts/{pk}/")  # the question's own page, live too

    olga_inbox = open_page(olga, "/?q=Bruno")
    item(olga_inbox, "Bruno").get_by_role("button", name="Reject").click()
    expect(olga_inbox.locator(".inbox-item.answered")).to_contain_text("Answered by olga")

    expect(piet_inbox.locator(f"#interrupt-{pk}")).to_contain_text("Answered by olga")
    expect(item(piet_inbox, "Bruno")).to_have_count(0)
    expect(piet_direct.locator(f"#interrupt-{pk}")).to_contain_text("Answered by olga")
    expect(piet_direct.get_by_role("button", name="Approve")).to_have_count(0)
    shown = json.loads(server.manage("wf", "show", run["run"]))
    assert shown["answered"][0]["answer"]["approved"] is False
    olga.close()
    piet.close()


def test_invalid_answer_shows_field_errors_and_changes_nothing(browser: Browser, server: Server) -> None:
    """(c) Enter in the comment sends no decision: a field error, the comment kept, nothing recorded."""
    run = server.start_run(
        "expense_approval", {"employee": "Carla", "amount": 300, "category": "other", "description": "Books"}
    )
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?q=Carla")
    comment = item(inbox, "Carla").get_by_label("Comment")
    comment.fill("Half of it, please")
    comment.press("Enter")
    expect(item(inbox, "Carla").locator(".decision .errors")).to_have_text("Choose Approve or Reject.")
    expect(item(inbox, "Carla").get_by_label("Comment")).to_have_value("Half of it, please")
    assert json.loads(server.manage("wf", "show", run["run"]))["status"] == "waiting"
    assert json.loads(server.manage("wf", "show", run["run"]))["answered"] == []
    context.close()


def test_without_permission_the_inbox_is_empty_and_links_404(browser: Browser, server: Server) -> None:
    """(d) a user without the permission sees nothing to answer and a 404 on a direct link."""
    server.start_run(
        "expense_approval", {"employee": "Dora", "amount": 300, "category": "other", "description": "Pens"}
    )
    olga = login(browser, server, "olga")
    pk = item(open_page(olga, "/?q=Dora"), "Dora").get_attribute("id").removeprefix("interrupt-")
    vera = login(browser, server, "vera")
    inbox = open_page(vera, "/")
    expect(inbox.locator(".inbox-item")).to_have_count(0)
    expect(inbox.locator("#inbox-empty")).to_contain_text("don't have permission")
    response = vera.new_page().goto(f"/interrupts/{pk}/")
    assert response is not None and response.status == 404
    olga.close()
    vera.close()


def test_answer_with_the_keyboard_only(browser: Browser, server: Server) -> None:
    """(e) Tab to the comment, type, Tab to Approve, Enter."""
    server.start_run(
        "expense_approval", {"employee": "Emil", "amount": 400, "category": "travel", "description": "Taxi"}
    )
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?q=Emil")
    target = item(inbox, "Emil").get_by_label("Comment")
    for _ in range(40):
        inbox.keyboard.press("Tab")
        if target.evaluate("el => el === document.activeElement"):
            break
    else:
        raise AssertionError("the comment field is not reachable with Tab")
    inbox.keyboard.type("Fine by me")
    inbox.keyboard.press("Tab")
    focused = inbox.evaluate("() => document.activeElement.textContent.trim()")
    assert focused == "Approve"
    inbox.keyboard.press("Enter")
    expect(inbox.locator(".inbox-item.answered")).to_contain_text("Approved · Comment: Fine by me")
    context.close()


def test_bulk_approve_three_batch_items(browser: Browser, server: Server) -> None:
    """(f) tick three batch_review questions, approve them at once, see a result per item."""
    items = [{"sku": f"BULK-{i}", "price": 10 + i, "flagged": True} for i in range(3)]
    run = server.start_run("batch_review", {"items": [*items, {"sku": "PLAIN", "price": 1}]})
    assert run["status"] == "waiting"
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?workflow=batch_review&q=BULK")
    expect(inbox.locator(".inbox-item")).to_have_count(3)
    for box in inbox.locator(".bulk-select input").all():
        box.check()
    inbox.get_by_role("button", name="Approve selected").click()
    expect(inbox.locator("#bulk-results li.ok")).to_have_count(3)
    expect(inbox.locator(".inbox-item.answered")).to_have_count(3)
    deadline = time.monotonic() + 15
    while json.loads(server.manage("wf", "show", run["run"]))["status"] != "completed":
        assert time.monotonic() < deadline, "the batch did not complete after the bulk answers"
        time.sleep(0.3)
    context.close()


def test_a_question_that_arrives_live_is_answerable(browser: Browser, server: Server) -> None:
    """Items appear live when a run starts waiting, and their forms work like any other."""
    context = login(browser, server, "olga")
    inbox = open_page(context, "/?q=Hana")
    expect(inbox.locator(".inbox-item")).to_have_count(0)
    run = server.start_run(
        "expense_approval", {"employee": "Hana", "amount": 200, "category": "meals", "description": "Lunch"}
    )
    expect(item(inbox, "Hana")).to_have_count(1)
    item(inbox, "Hana").get_by_role("button", name="Approve").click()
    expect(inbox.locator(".inbox-item.answered")).to_contain_text("Answered by olga")
    deadline = time.monotonic() + 15
    while json.loads(server.manage("wf", "show", run["run"]))["status"] != "completed":
        assert time.monotonic() < deadline, "the run did not complete after the answer"
        time.sleep(0.3)
    context.close()


def test_run_page_catches_up_after_the_server_restarts(browser: Browser, server: Server) -> None:
    """A reconnecting run page says where it was and receives what it missed, once, in order."""
    run = expense(server, "Gus", 700)
    context = login(browser, server, "olga")
    page = open_waiting_run(context, run)
    before = page.locator("#timeline > li[data-seq]").count()

    server.halt()  # the page's socket drops; meanwhile the CLI answers and finishes the run
    server.answer(run, "manager-approval", {"approved": True}, user="olga")
    server.serve()

    expect(page.locator("#run-status")).to_have_text("completed", timeout=45_000)
    seqs = [
        int(s)
        for s in page.locator("#timeline > li[data-seq]").evaluate_all("els => els.map(e => e.dataset.seq)")
    ]
    assert len(seqs) > before
    assert seqs == list(range(seqs[0], seqs[-1] + 1))  # in order, each once
    context.close()
