"""50 simultaneous answers to one question through two web processes: one wins, one job."""

from __future__ import annotations

import signal
import threading
from html.parser import HTMLParser
from typing import Any

import requests

from tests.scaled.conftest import Cluster, check_logs

ANSWERS = 50


class _Form(HTMLParser):
    """The fields of the first form whose action ends with ``suffix`` (checkboxes ticked)."""

    def __init__(self, suffix: str) -> None:
        super().__init__()
        self.suffix, self.inside, self.action, self.fields = suffix, False, "", {}

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {key: value or "" for key, value in attrs}
        if tag == "form" and not self.action and values.get("action", "").endswith(self.suffix):
            self.inside, self.action = True, values["action"]
        elif tag == "input" and self.inside and values.get("name"):
            if values.get("type") == "checkbox":
                self.fields[values["name"]] = values.get("value") or "on"
            elif values.get("type") not in ("submit", "button"):
                self.fields.setdefault(values["name"], values.get("value", ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self.inside = False


def form(html: str, suffix: str) -> tuple[str, dict[str, Any]]:
    parser = _Form(suffix)
    parser.feed(html)
    assert parser.action, f"no form ending with {suffix!r}"
    return parser.action, parser.fields


def logged_in(base: str, username: str, password: str) -> requests.Session:
    client = requests.Session()
    _, fields = form(client.get(f"{base}/login/", timeout=30).text, "")
    fields.update(username=username, password=password)
    done = client.post(f"{base}/login/", data=fields, headers={"Referer": f"{base}/login/"}, timeout=30)
    assert done.ok and "/login/" not in done.url, done.status_code
    return client


def test_fifty_simultaneous_answers_over_two_web_processes_one_wins_one_job(cluster: Cluster) -> None:
    cluster.drive("operator", "olga", "olga-pass-123")
    worker = cluster.worker(concurrency=4)
    (run,) = cluster.drive("start", "review", "1")
    cluster.wait_for(
        lambda: cluster.sql("SELECT count(*) FROM wfapp_interrupt WHERE status = 'pending'")[0][0] == 1,
        "the run to ask its question",
    )
    worker.send_signal(signal.SIGTERM)  # no worker from here on: the job must wait in the queue
    assert worker.wait(timeout=60) == 0
    (pk,) = cluster.sql("SELECT id FROM wfapp_interrupt WHERE session_id = %s", run)[0]
    servers = [cluster.serve()[1] for _ in range(2)]
    for base in servers:
        cluster.wait_for(lambda base=base: _up(base), f"{base} to serve")
    # One login per web process (password hashing is slow by design); 25 clients share each.
    pages = []
    for base in servers:
        login = logged_in(base, "olga", "olga-pass-123")
        action, fields = form(login.get(f"{base}/interrupts/{pk}/", timeout=30).text, "/answer/")
        fields["f.approved"] = "true"  # the Approve button
        pages.append((login.cookies, f"{base}{action}", fields, f"{base}/interrupts/{pk}/"))
    posts = []
    for i in range(ANSWERS):
        cookies, url, fields, referer = pages[i % 2]
        client = requests.Session()
        client.cookies.update(cookies)
        posts.append((client, url, fields, referer))
    start = threading.Barrier(ANSWERS)
    statuses: list[int] = []

    def answer(client: requests.Session, url: str, fields: dict[str, Any], referer: str) -> None:
        start.wait()
        statuses.append(
            client.post(
                url, data=fields, headers={"Referer": referer}, allow_redirects=False, timeout=60
            ).status_code
        )

    threads = [threading.Thread(target=answer, args=post) for post in posts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [302] + [409] * (ANSWERS - 1), statuses
    assert (
        cluster.sql("SELECT count(*) FROM wfapp_event WHERE session_id = %s AND kind = 'answer'", run)[0][0]
        == 1
    )
    outcomes = dict(
        cluster.sql("SELECT outcome, count(*) FROM wfapp_answerattempt WHERE session_id = %s GROUP BY 1", run)
    )
    assert outcomes == {"accepted": 1, "already_answered": ANSWERS - 1}, outcomes
    jobs = cluster.sql(
        "SELECT status FROM procrastinate_jobs WHERE task_name = 'wfapp.advance_run' AND args->>'session_id' = %s "
        "AND status = 'todo'",
        run,
    )
    assert jobs == [("todo",)]
    cluster.worker(concurrency=4)
    cluster.wait_for(
        lambda: (
            cluster.sql("SELECT status FROM wfapp_session WHERE id = %s AND lease_owner IS NULL", run)
            == [("completed",)]
        ),
        "a new worker to finish the run",
    )
    check_logs(cluster, [run])


def _up(base: str) -> bool:
    try:
        return requests.get(f"{base}/healthz", timeout=5).status_code == 200
    except requests.ConnectionError:
        return False
