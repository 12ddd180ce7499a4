"""The answer size limit holds for a chunked POST (no Content-Length) against the served app.

The server is `manage.py serve` (Daphne) in a subprocess, as in the browser tests; the request
is sent with `Transfer-Encoding: chunked` by the standard library's HTTP client.
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.parse
from collections.abc import Iterator
from http.cookies import SimpleCookie
from pathlib import Path

import pytest

from tests.web.conftest import BIG_EXPENSE
from tests.web.test_browser import Server, serving


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("chunked")) as live:
        yield live


class Session:
    """A logged-in HTTP session: cookies and the CSRF token, kept by hand."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.cookies: dict[str, str] = {}

    def request(
        self, method: str, path: str, body: bytes | Iterator[bytes] | None = None, chunked: bool = False
    ) -> tuple[int, str]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        if body is not None:
            headers["Content-Type"] = "application/x-www-form-urlencoded"
            headers["X-CSRFToken"] = self.cookies.get("csrftoken", "")
        try:
            conn.request(method, path, body=body, headers=headers, encode_chunked=chunked)
            response = conn.getresponse()
            for header in response.headers.get_all("Set-Cookie") or []:
                for name, morsel in SimpleCookie(header).items():
                    self.cookies[name] = morsel.value
            return response.status, response.read().decode()
        finally:
            conn.close()

    def login(self, username: str) -> None:
        status, html = self.request("GET", "/login/")
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)
        assert status == 200 and token is not None
        form = {"username": username, "password": f"pw-{username}", "csrfmiddlewaretoken": token.group(1)}
        status, _ = self.request("POST", "/login/", urllib.parse.urlencode(form).encode())
        assert status == 302 and "sessionid" in self.cookies


def chunks(body: bytes, size: int = 8192) -> Iterator[bytes]:
    for start in range(0, len(body), size):
        yield body[start : start + size]


def answer_path(session: Session, interrupt_id: str) -> str:
    _, html = session.request("GET", "/")
    found = re.search(rf'action="(/interrupts/\d+/answer/)"[^>]*data-interrupt="{interrupt_id}"', html)
    if found is None:
        paths = re.findall(r"/interrupts/\d+/answer/", html)
        assert paths, "no answer form on the inbox"
        return paths[0]
    return found.group(1)


def test_a_chunked_answer_over_the_limit_is_413_and_nothing_is_stored(server: Server, tmp_path: Path) -> None:
    run = server.start_run("expense_approval", BIG_EXPENSE)
    assert run["status"] == "waiting"
    session = Session(server)
    session.login("olga")
    path = answer_path(session, "manager-approval")

    big = urllib.parse.urlencode({"f.approved": "true", "f.comment": "x" * 200_000}).encode()
    status, text = session.request("POST", path, chunks(big), chunked=True)
    assert status == 413, text[:500]
    assert "too large (195 KB): the limit is 64 KB" in text
    report = json.loads(server.manage("wf", "show", run["run"]))
    assert len(report["pending"]) == 2 and report["answered"] == []

    small = urllib.parse.urlencode({"f.approved": "true", "f.comment": "fine"}).encode()
    status, _ = session.request("POST", path, chunks(small, 7), chunked=True)
    assert status in (200, 302)  # a chunked body is read, not refused for lacking a length
    report = json.loads(server.manage("wf", "show", run["run"]))
    assert [item["answer"] for item in report["answered"]] == [{"approved": True, "comment": "fine"}]
