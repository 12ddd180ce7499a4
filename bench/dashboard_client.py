"""A dashboard client for the benchmark: a real server process, HTTP with a session, websockets.

``Server`` runs ``manage.py serve`` (Daphne and the embedded runtime in one process, as
``make run`` does) on a free port; ``Browser`` logs in with the login form, keeps the session
and CSRF cookies, reads forms out of pages and fragments like htmx does, and posts them with
the ``HX-Request`` and ``X-CSRFToken`` headers the dashboard's htmx sends; ``Socket`` listens
on a page's websocket and stamps every frame with ``time.time()`` as it arrives.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.cookiejar
import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
FLOWS = "bench.dashboard_flows:bench_push,bench.dashboard_flows:bench_ask"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``manage.py serve`` in a subprocess on the benchmark's data directory and database."""

    def __init__(self, data_dir: Path, env: dict[str, str], commit_log: Path) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.log_path = data_dir / "server.log"
        self.commit_log = commit_log
        self.env = {
            **env,
            "WFAPP_EXTRA_WORKFLOWS": FLOWS,
            "WFAPP_BENCH_COMMIT_LOG": str(commit_log),
            "WFAPP_LOG_LEVEL": "WARNING",
            "PYTHONPATH": str(ROOT),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        cmd = [sys.executable, str(ROOT / "manage.py"), "serve", "--port", str(self.port), "-v", "0"]
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(cmd, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited {self.proc.returncode}:\n{self.tail()}")
            try:
                with urllib.request.urlopen(self.base + "/login/", timeout=2) as r:
                    if r.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                time.sleep(0.2)
        raise RuntimeError(f"the server did not answer within 60 s:\n{self.tail()}")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def tail(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-3000:]
        except OSError:
            return ""

    def commits(self) -> dict[str, list[tuple[int, float]]]:
        """Per run, (seq, time.time()) of each commit's doorbell, in order (see dashboard_flows)."""
        out: dict[str, list[tuple[int, float]]] = {}
        with contextlib.suppress(OSError):
            for line in self.commit_log.read_text().splitlines():
                session_id, seq, at = line.split()
                out.setdefault(session_id, []).append((int(seq), float(at)))
        return out


@dataclass
class Form:
    url: str
    fields: list[tuple[str, str]] = field(default_factory=list)  # what a submit sends, buttons aside
    buttons: list[tuple[str, str, str]] = field(default_factory=list)  # (name, value, class)


class _Forms(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.forms: list[Form] = []
        self._text: tuple[Form, str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "form":
            self.forms.append(Form(a.get("hx-post") or a.get("action", "")))
            return
        if not self.forms or "form" in a:  # controls tied to another form by id are not ours
            return
        form = self.forms[-1]
        if tag == "input" and a.get("name"):
            kind = a.get("type", "text")
            if kind in ("checkbox", "radio") and "checked" not in a:
                return
            if kind not in ("submit", "button"):
                form.fields.append((a["name"], a.get("value", "")))
        elif tag == "button" and a.get("name"):
            form.buttons.append((a["name"], a.get("value", ""), a.get("class", "")))
        elif tag == "textarea" and a.get("name"):
            self._text = (form, a["name"])

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            form, name = self._text
            form.fields.append((name, data.strip()))
            self._text = None

    def handle_endtag(self, tag: str) -> None:
        if tag == "textarea" and self._text is not None:
            form, name = self._text
            form.fields.append((name, ""))
            self._text = None


@dataclass
class Reply:
    status: int
    url: str
    body: str
    headers: dict[str, str]  # names in lower case


def forms(html: str) -> list[Form]:
    parser = _Forms()
    parser.feed(html)
    return parser.forms


class Browser:
    """One logged-in operator: session cookie, CSRF cookie, htmx-like form posts."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str:
        return next((c.value or "" for c in self.jar if c.name == name), "")

    def get(self, path: str) -> tuple[str, str]:
        with self.opener.open(self.base + path, timeout=30) as r:
            return r.geturl(), r.read().decode()

    def post(self, path: str, data: list[tuple[str, str]], *, htmx: bool = True) -> Reply:
        headers = {"X-CSRFToken": self.cookie("csrftoken"), "Origin": self.base}
        if htmx:
            headers["HX-Request"] = "true"
        body = urllib.parse.urlencode(data).encode()
        request = urllib.request.Request(self.base + path, data=body, headers=headers, method="POST")
        try:
            with self.opener.open(request, timeout=30) as r:
                return Reply(
                    r.status, r.geturl(), r.read().decode(), {k.lower(): v for k, v in r.headers.items()}
                )
        except urllib.error.HTTPError as e:
            return Reply(
                e.code, path, e.read().decode(errors="replace"), {k.lower(): v for k, v in e.headers.items()}
            )

    def login(self, username: str, password: str) -> None:
        _, page = self.get("/login/")
        [form] = [f for f in forms(page) if "login" in f.url or not f.url]
        data = [(k, v) for k, v in form.fields if k not in ("username", "password")]
        reply = self.post("/login/", [*data, ("username", username), ("password", password)], htmx=False)
        if reply.status != 200 or "/login/" in reply.url or not self.cookie("sessionid"):
            raise RuntimeError(f"login failed: {reply.status} {reply.url}")

    def start(self, workflow: str, values: dict[str, str]) -> str:
        """Fill the workflow's start form like a person (defaults kept), submit it; the run id."""
        _, page = self.get(f"/workflows/{workflow}/")
        [form] = [f for f in forms(page) if f.url.endswith("/start/")]
        data = [
            (k, next((v for suffix, v in values.items() if k.endswith(suffix)), v)) for k, v in form.fields
        ]
        reply = self.post(form.url, data)
        # htmx is told where to go in HX-Redirect (a plain form post would be redirected).
        match = re.search(r"/runs/([0-9a-f]{32})/", reply.headers.get("hx-redirect", ""))
        if reply.status != 200 or match is None:
            raise RuntimeError(f"starting {workflow} failed: {reply.status} {reply.body[:500]}")
        return match.group(1)

    def answer(self, form: Form, decision: str = "true") -> Reply:
        """Submit an answer form with its Approve (or Reject) button, as htmx would."""
        button = next(
            (b for b in form.buttons if b[1] == decision), (form.buttons[0] if form.buttons else None)
        )
        data = list(form.fields) + ([(button[0], button[1])] if button else [])
        return self.post(form.url, data)


class Socket:
    """A page's websocket: every frame kept with its arrival time (``time.time()``)."""

    def __init__(self, base: str, path: str, cookies: str) -> None:
        self.url = base.replace("http://", "ws://") + path
        self.origin = base
        self.cookies = cookies
        self.frames: list[tuple[float, str]] = []
        self._changed = asyncio.Event()
        self._ws: Any = None
        self._reader: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Socket:
        from websockets.asyncio.client import connect
        from websockets.typing import Origin

        self._ws = await connect(
            self.url,
            additional_headers={"Cookie": self.cookies},
            origin=Origin(self.origin),
            max_size=2**24,
        )
        self._reader = asyncio.create_task(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    async def _read(self) -> None:
        async for message in self._ws:
            self.frames.append((time.time(), message if isinstance(message, str) else message.decode()))
            self._changed.set()

    async def send(self, message: dict[str, Any]) -> None:
        await self._ws.send(json.dumps(message))

    async def wait_for(self, found: Callable[[str], Any], timeout: float = 30.0) -> tuple[float, Any]:
        """The arrival time and the result of the first frame for which `found` is truthy."""
        seen = 0
        async with asyncio.timeout(timeout):
            while True:
                for at, text in self.frames[seen:]:
                    hit = found(text)
                    if hit:
                        return at, hit
                seen = len(self.frames)
                self._changed.clear()
                await self._changed.wait()

    def seq_arrivals(self) -> dict[int, float]:
        """When each event (by seq) first reached this socket."""
        arrived: dict[int, float] = {}
        for at, text in self.frames:
            for seq in re.findall(r'data-seq="(\d+)"', text):
                arrived.setdefault(int(seq), at)
        return arrived


def answer_form(text: str) -> Form | None:
    return next((f for f in forms(text) if re.search(r"/interrupts/\d+/answer/", f.url)), None)


def database_url() -> str | None:
    """The URL of the database Django uses now (PostgreSQL's benchmark database), else None."""
    from django.conf import settings

    db = settings.DATABASES["default"]
    if db["ENGINE"] == "django.db.backends.sqlite3":
        return None
    url = urllib.parse.urlsplit(os.environ["DATABASE_URL"])
    return urllib.parse.urlunsplit(url._replace(path="/" + str(db["NAME"])))


@contextlib.contextmanager
def serving(data_dir: Path, env: dict[str, str]) -> Iterator[Server]:
    """``Server`` on ``data_dir``: what fails while it serves is raised with its log's tail."""
    with Server(data_dir, env, data_dir / "commits.log") as server:
        try:
            yield server
        except Exception as exc:
            raise RuntimeError(f"{type(exc).__name__}: {exc}\n-- server log:\n{server.tail()}") from exc


def environ_for_server(data_dir: Path, database_url: str | None) -> dict[str, str]:
    env = {
        k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "WFAPP_EXTRA_WORKFLOWS")
    }
    env.update(WFAPP_DATA_DIR=str(data_dir), DJANGO_SETTINGS_MODULE="wfapp.settings.embedded")
    # One operator starts the benchmark's runs and answers them: its approval questions are
    # exempt from four-eyes, as a workflow may be (what is measured stays as it was).
    env["WFAPP_REQUESTER_MAY_APPROVE"] = "bench_ask,bench_push"
    if database_url:
        env["DATABASE_URL"] = database_url
    return env
