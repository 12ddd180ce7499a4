"""Notifications in workers mode: the queue's periodic job (``wfapp.notify``) sends each new
question's webhook once, signed, while two worker processes both run the job."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest

from tests.scaled.conftest import Cluster

SECRET = "scaled-webhook-secret"


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]]

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        self.received.append((dict(self.headers), body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[tuple[dict[str, str], bytes]]]]:
    received: list[tuple[dict[str, str], bytes]] = []
    handler = type("Receiver", (_Receiver,), {"received": received})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", received
    finally:
        server.shutdown()


def test_each_new_question_is_sent_once_signed_while_two_workers_run_the_job(
    cluster: Cluster, receiver: tuple[str, list[tuple[dict[str, str], bytes]]]
) -> None:
    url, received = receiver
    hooks = {"WFAPP_WEBHOOK_URLS": url, "WFAPP_WEBHOOK_SECRET": SECRET, "WFAPP_NOTIFY_SECONDS": "1"}
    cluster.worker(concurrency=4, **hooks)
    cluster.worker(concurrency=4, **hooks)
    runs = cluster.drive("start", "review", "2")
    cluster.wait_for(lambda: len(received) >= 2, "the questions' webhooks", timeout=120)
    time.sleep(3)  # a few more ticks of both workers' jobs: nothing is sent twice
    questions = []
    for headers, body in received:
        signed = hmac.new(
            SECRET.encode(), headers["X-Wfapp-Timestamp"].encode() + b"." + body, hashlib.sha256
        )
        assert headers["X-Wfapp-Signature"] == "sha256=" + signed.hexdigest()
        assert headers["X-Wfapp-Event"] == "question"
        questions.append(json.loads(body)["run"]["id"])
    assert sorted(questions) == sorted(runs)  # one per question, none twice
    sent = cluster.sql("SELECT status, attempts FROM wfapp_delivery WHERE channel = 'webhook'")
    assert sent == [("sent", 1)] * 2
