"""The answer size limit holds for a chunked POST (no Content-Length) against the served app.

The server is `manage.py serve` (Daphne) in a subprocess, as in the browser tests; the request
is sent with `Transfer-Encoding: chunked` by the standard library's HTTP client.
"""

from __future__ import annotations

import http.client
import json
import re
import select
import socket
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


MB = 1024 * 1024


def _raw_post(server: Server, path: str, head: dict[str, str]) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=30)
    lines = [f"POST {path} HTTP/1.1", "Host: 127.0.0.1", *(f"{k}: {v}" for k, v in head.items())]
    sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
    return sock


def _answer(sock: socket.socket) -> bytes:
    """What the server said before it closed (b"" when it reset the connection instead)."""
    received = b""
    try:
        while chunk := sock.recv(65536):
            received += chunk
    except ConnectionResetError:
        pass
    return received


def test_a_chunked_body_over_the_cap_is_refused_long_before_it_ends(server: Server) -> None:
    """An unauthenticated 64 MB chunked POST: the server answers 413 (or closes) once the cap
    (512 KB by default) is passed, not after reading 64 MB to say 401."""
    sock = _raw_post(
        server, "/api/runs", {"Transfer-Encoding": "chunked", "Content-Type": "application/json"}
    )
    piece = b"x" * 65536
    chunk = b"%x\r\n%s\r\n" % (len(piece), piece)
    sent, stopped = 0, False
    with sock:
        while sent < 64 * MB:
            readable, _, _ = select.select([sock], [], [], 0)
            if readable:
                stopped = True  # the server answered (or closed) while the body was still coming
                break
            try:
                sock.sendall(chunk)
            except (BrokenPipeError, ConnectionResetError, TimeoutError):
                stopped = True
                break
            sent += len(piece)
        answer = _answer(sock)
    assert stopped, "the server read all 64 MB"
    assert sent < 16 * MB, f"{sent // MB} MB were taken before the refusal"
    assert answer == b"" or answer.startswith(b"HTTP/1.1 413 "), answer[:200]


def test_a_declared_length_over_the_cap_is_refused_before_any_body_is_sent(server: Server) -> None:
    sock = _raw_post(server, "/login/", {"Content-Length": str(64 * MB), "Content-Type": "text/plain"})
    with sock:
        answer = _answer(sock)  # no body byte was sent: the answer comes on the headers alone
    assert answer.startswith(b"HTTP/1.1 413 Content Too Large\r\n"), answer[:200]
    assert b"Request body too large: the limit is 524288 bytes." in answer
    status, _ = Session(server).request("GET", "/login/")
    assert status == 200  # the server serves on
