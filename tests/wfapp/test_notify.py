"""Notifications: notices once each, mails to who may answer, digests, signed webhooks retried
against a real local HTTP server, every try recorded; URLs only from settings."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import threading
import time
from collections.abc import Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import Group, Permission, User
from django.core import mail
from django.core.checks import run_checks
from django.db import transaction
from django.utils import timezone

from engine import Event, Runner
from tests.wfapp.helpers import settled
from wfapp.human import claims
from wfapp.models import (
    AnswerLink,
    Delivery,
    DeliveryAttempt,
    Interrupt,
    Notice,
    NotifyPreference,
    Session,
    WorkflowAccess,
)
from wfapp.notify import outbox, sending
from wfapp.notify.pump import pump
from wfapp.registry import get_workflow
from wfapp.runs import starting
from wfapp.store.events import DjangoEventStore

SECRET = "a test secret"


class Hook:
    """A local webhook receiver answering the statuses queued in ``replies`` (then 200)."""

    def __init__(self) -> None:
        self.replies: list[int] = []
        self.received: list[tuple[dict[str, str], bytes]] = []
        self.location = ""  # where a 3xx reply points
        self.on_receive: Any = None  # called with each request's body before it is answered
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                hook.received.append((dict(self.headers.items()), body))
                if hook.on_receive is not None:
                    hook.on_receive(body)
                status = hook.replies.pop(0) if hook.replies else 200
                self.send_response(status)
                if 300 <= status < 400:
                    self.send_header("Location", hook.location)
                self.end_headers()

            do_GET = do_POST  # a redirected POST may come back as a GET

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook(settings: Any) -> Iterator[Hook]:
    receiver = Hook()
    settings.WFAPP_WEBHOOK_URLS = [receiver.url]
    settings.WFAPP_WEBHOOK_SECRET = SECRET
    settings.WFAPP_NOTIFY_BACKOFF_SECONDS = 0  # every retry is due at once
    outbox.forget()
    yield receiver
    receiver.close()


@pytest.fixture(autouse=True)
def _fresh_marks() -> None:
    outbox.forget()


def _people() -> dict[str, User]:
    payables = Group.objects.get_or_create(name="payables")[0]
    WorkflowAccess.objects.create(workflow="approval", group=payables, may_answer=True)
    made = {}
    for name, email, in_payables in (
        ("fin", "fin@example.com", True),
        ("dora", "dora@example.com", True),
        ("nomail", "", True),
        ("outsider", "out@example.com", False),
    ):
        user = User.objects.create_user(name, email=email, password="pw-" + name)
        if in_payables:
            user.groups.add(payables)
        made[name] = user
    NotifyPreference.objects.create(user=made["dora"], digest=True)
    return made


def _waiting_run(node_input: Any = None) -> str:
    async def go() -> str:
        session_id, _ = await starting.create_run("approval", node_input or {"n": 1})
        await Runner(get_workflow("approval"), store=DjangoEventStore()).advance(session_id)
        return session_id

    return async_to_sync(go)()


def test_a_question_notifies_who_may_answer_once(transactional_db: None, workflows: None, hook: Hook) -> None:
    people = _people()
    run = _waiting_run()
    pump()
    pump()  # a second look finds nothing new
    [notice] = Notice.objects.all()
    assert (notice.kind, notice.session_id) == ("question", run)
    email = Delivery.objects.filter(channel="email")
    assert sorted(email.values_list("target", "digest")) == [
        ("dora@example.com", True),
        ("fin@example.com", False),
    ]
    [sent] = mail.outbox
    assert sent.to == ["fin@example.com"] and "Approve" in sent.body
    assert f"/interrupts/{notice.interrupt_id}/" in sent.body
    assert "outsider" not in json.dumps([m.to for m in mail.outbox])
    # Dora's waits for her digest; when it is due she gets one mail.
    held = Delivery.objects.get(recipient=people["dora"])
    assert held.status == "pending" and held.next_attempt_at > timezone.now()
    sending.send_due(now=held.next_attempt_at)
    assert [m.to for m in mail.outbox] == [["fin@example.com"], ["dora@example.com"]]
    assert "1 notifications" in mail.outbox[1].subject
    assert len(hook.received) == 1


def test_a_webhook_is_retried_until_it_goes_through(
    transactional_db: None, workflows: None, hook: Hook
) -> None:
    _people()
    hook.replies = [500, 503]
    run = _waiting_run()
    pump()  # 500
    sending.send_due()  # 503
    sending.send_due()  # 200
    sending.send_due()  # nothing left
    [delivery] = Delivery.objects.filter(channel="webhook")
    assert (delivery.status, delivery.attempts) == ("sent", 3)
    tries = list(DeliveryAttempt.objects.filter(delivery=delivery).values_list("ok", "response_status"))
    assert tries == [(False, 500), (False, 503), (True, 200)]
    assert len(hook.received) == 3
    headers, body = hook.received[-1]
    expected = hmac.new(
        SECRET.encode(), headers["X-Wfapp-Timestamp"].encode() + b"." + body, hashlib.sha256
    ).hexdigest()
    assert headers["X-Wfapp-Signature"] == f"sha256={expected}"
    assert headers["X-Wfapp-Event"] == "question"
    payload = json.loads(body)
    assert payload["run"]["id"] == run and payload["delivery"] == delivery.pk
    assert [h[1] for h in hook.received] == [body] * 3  # the same body on every try


def test_a_webhook_that_keeps_failing_is_given_up(
    transactional_db: None, workflows: None, hook: Hook, settings: Any
) -> None:
    settings.WFAPP_NOTIFY_ATTEMPTS = 2
    hook.replies = [500, 500, 500]
    _waiting_run()
    pump()
    sending.send_due()
    sending.send_due()
    [delivery] = Delivery.objects.filter(channel="webhook")
    assert (delivery.status, delivery.attempts) == ("failed", 2)
    assert "HTTP 500" in delivery.last_error
    assert len(hook.received) == 2


def test_an_unreachable_webhook_is_recorded(transactional_db: None, workflows: None, settings: Any) -> None:
    settings.WFAPP_WEBHOOK_URLS = ["http://127.0.0.1:9/nothing-listens"]
    settings.WFAPP_WEBHOOK_SECRET = SECRET
    _waiting_run()
    pump()
    [delivery] = Delivery.objects.all()
    assert delivery.status == "pending" and delivery.attempts == 1
    assert "unreachable" in delivery.last_error
    assert delivery.next_attempt_at > timezone.now()


def test_webhook_urls_come_from_settings_only(transactional_db: None, workflows: None, hook: Hook) -> None:
    _waiting_run({"webhook": "http://127.0.0.1:1/evil", "url": "http://evil.example.com"})
    pump()
    assert set(Delivery.objects.values_list("target", flat=True)) == {hook.url}
    assert len(hook.received) == 1


def test_a_delivery_to_a_url_no_longer_configured_is_not_sent(
    transactional_db: None, workflows: None, hook: Hook, settings: Any
) -> None:
    _waiting_run()
    outbox.collect()
    settings.WFAPP_WEBHOOK_URLS = []
    sending.send_due()
    [delivery] = Delivery.objects.filter(channel="webhook")
    assert "no longer one of WFAPP_WEBHOOK_URLS" in delivery.last_error
    assert hook.received == []


def test_the_settings_are_checked(settings: Any) -> None:
    settings.WFAPP_WEBHOOK_URLS = ["ftp://example.com/x", "https://ok.example.com/hook"]
    settings.WFAPP_WEBHOOK_SECRET = ""
    ids = {message.id for message in run_checks(tags=["wfapp"]) if message.id.startswith("wfapp.E10")}
    assert ids == {"wfapp.E101", "wfapp.E102"}


async def test_a_failed_run_notifies_and_the_runtime_sends_it(
    engine_runtime: Any, hook: Hook, settings: Any
) -> None:
    settings.WFAPP_NOTIFY_SECONDS = 0.1
    await engine_runtime.stop()  # restart it so that its notifier takes the short period
    await engine_runtime.start()
    session_id = await starting.start_run("flaky", {"n": 1})
    await settled(session_id, "failed")
    for _ in range(150):
        if hook.received:
            break
        await asyncio.sleep(0.1)
    assert hook.received, "the runtime's notifier sent nothing"
    payload = json.loads(hook.received[0][1])
    assert payload["event"] == "failed" and payload["run"]["id"] == session_id
    assert "unavailable" in payload["error"]["message"]


def test_a_question_mail_carries_an_answer_link_when_enabled(
    transactional_db: None, workflows: None, settings: Any
) -> None:
    _people()
    _waiting_run()
    pump()
    assert "/answer-link/" not in mail.outbox[0].body  # off by default
    settings.WFAPP_ANSWER_LINKS = True
    outbox.forget()
    _waiting_run({"n": 2})
    pump()
    body = mail.outbox[-1].body
    assert "/answer-link/" in body and "works once" in body
    [link] = AnswerLink.objects.all()
    assert link.recipient.username == "fin"  # one recipient, one link: Dora's waits for her digest


async def test_assigned_questions_notify_their_assignees_and_a_reassignment_the_new_ones(
    engine_runtime: Any, settings: Any
) -> None:
    from tests.wfapp.human_flows import PATHS as HUMAN
    from tests.wfapp.test_assignment import person, waiting_run

    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *HUMAN.values()]
    ann = await sync_to_async(person)("ann")
    await sync_to_async(person)("bea", "buyers")
    admin = await sync_to_async(person)("root", admin=True)
    for name in ("ann", "bea", "root"):
        await User.objects.filter(username=name).aupdate(email=f"{name}@example.com")
    session_id = await waiting_run("assigned", {"assignees": ["group:buyers"]}, ann)
    await sync_to_async(outbox.collect)()
    question = [
        t async for t in Delivery.objects.filter(notice__kind="question").values_list("target", flat=True)
    ]
    assert question == ["bea@example.com"]  # the assignees, not everyone who may answer
    await claims.reassign_interrupt(session_id, "decide", ["ann"], user=admin)
    # Recorded with the decision: there as soon as it is committed, no thread to wait for.
    assigned = [
        t async for t in Delivery.objects.filter(notice__kind="assigned").values_list("target", flat=True)
    ]
    assert assigned == ["ann@example.com"]


def _reassign_in_transaction(session_id: str, users: list[str], *, commit: bool) -> bool:
    """Append a reassignment in a transaction; whether its notice was there before the commit."""
    store = DjangoEventStore()
    last = Session.objects.values_list("last_seq", flat=True).get(pk=session_id)
    node_path = Interrupt.objects.values_list("node_path", flat=True).get(session_id=session_id)
    data = {"decision": "reassign", "interrupt_id": "decide", "actor": "root", "users": users}
    decision = Event(
        seq=last + 1, session_id=session_id, author="root", node_path=node_path,
        kind="assignment", timestamp=time.time(), assignment=data,
    )  # fmt: skip
    with transaction.atomic():
        store.append_sync(session_id, [decision], expected_seq=last)
        seen = Notice.objects.filter(kind="assigned", session_id=session_id).exists()
        transaction.set_rollback(not commit)
    return seen


async def test_a_decisions_notice_is_in_its_transaction_and_rolls_back_with_it(
    engine_runtime: Any, settings: Any
) -> None:
    from tests.wfapp.human_flows import PATHS as HUMAN
    from tests.wfapp.test_assignment import person, waiting_run

    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *HUMAN.values()]
    ann = await sync_to_async(person)("ann")
    await sync_to_async(person)("bea", "buyers")
    await User.objects.filter(username="ann").aupdate(email="ann@example.com")
    session_id = await waiting_run("assigned", {"assignees": ["group:buyers"]}, ann)

    assert await sync_to_async(_reassign_in_transaction)(session_id, ["ann"], commit=False)
    assert not await Notice.objects.filter(kind="assigned").aexists()  # rolled back with it
    assert (await Interrupt.objects.aget(session_id=session_id)).assignees == "|group:buyers|"

    assert await sync_to_async(_reassign_in_transaction)(session_id, ["ann"], commit=True)
    [notice] = [n async for n in Notice.objects.filter(kind="assigned")]
    assert notice.session_id == session_id
    assert [d.target async for d in Delivery.objects.filter(notice=notice)] == ["ann@example.com"]


def _mailable(name: str, *groups: str, email: str = "") -> User:
    from tests.wfapp.test_assignment import person

    user = person(name, *groups)
    user.email = email or f"{name}@example.com"
    user.save(update_fields=["email"])
    return user


async def test_a_newline_in_workflow_data_makes_a_one_line_subject_and_the_mail_goes_out(
    engine_runtime: Any, settings: Any
) -> None:
    from tests.wfapp.human_flows import PATHS as HUMAN
    from tests.wfapp.test_assignment import waiting_run

    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *HUMAN.values()]
    await sync_to_async(_mailable)("bea")
    what = "refund\r\nBcc: all@example.com\u2028\u2029\x0b\x85\u200e tab\there " + "long " * 40
    await waiting_run("assigned", {"assignees": ["bea"], "what": what})
    await sync_to_async(pump)()
    [sent] = mail.outbox
    assert sent.subject.startswith("[wfapp] Waiting: Decide on refund Bcc: all@example.com tab here long")
    assert len(sent.subject) <= sending.SUBJECT_LENGTH and sent.subject.endswith("long…")
    assert sent.to == ["bea@example.com"] and sent.message()["Bcc"] is None
    delivery = await Delivery.objects.aget(channel="email")
    assert (delivery.status, delivery.attempts) == ("sent", 1)


def test_a_permanent_error_fails_at_once_and_operators_see_it(
    transactional_db: None, workflows: None, client: Any
) -> None:
    from tests.wfapp.test_assignment import person

    _mailable("broken", email="broken\n@example.com")  # imported by hand, never validated
    _waiting_run()
    pump()
    delivery = Delivery.objects.get(target="broken\n@example.com")
    assert (delivery.status, delivery.attempts) == ("failed", 1)  # not tried again: it would fail again
    assert "linefeed" in delivery.last_error
    assert mail.outbox == []

    operator = person("operator")
    operator.is_staff = True
    operator.save(update_fields=["is_staff"])
    operator.user_permissions.add(*Permission.objects.filter(codename="view_delivery"))
    client.force_login(operator)
    page = client.get("/runs/").content.decode()
    assert "1 notification could not be delivered" in page
    listing = client.get("/admin/wfapp/delivery/?status__exact=failed").content.decode()
    assert "broken" in listing and "linefeed" in listing

    client.force_login(person("someone"))
    assert "could not be delivered" not in client.get("/runs/").content.decode()


def test_a_webhook_redirect_is_not_followed_and_fails_the_delivery(
    transactional_db: None, workflows: None, hook: Hook
) -> None:
    elsewhere = Hook()
    try:
        hook.replies, hook.location = [302], elsewhere.url
        _waiting_run()
        pump()
        sending.send_due()
        assert elsewhere.received == []  # the signature never went to another host
        [delivery] = Delivery.objects.filter(channel="webhook")
        assert (delivery.status, delivery.attempts) == ("failed", 1)
        assert f"redirects to {elsewhere.url} are not followed" in delivery.last_error
    finally:
        elsewhere.close()


def test_a_webhook_url_with_its_own_secret_is_signed_with_it(
    transactional_db: None, workflows: None, hook: Hook, settings: Any
) -> None:
    settings.WFAPP_WEBHOOK_SECRETS = {hook.url: "its own secret"}
    settings.WFAPP_WEBHOOK_SECRET = ""
    assert not [m for m in run_checks(tags=["wfapp"]) if m.id == "wfapp.E102"]
    _waiting_run()
    pump()
    [(headers, body)] = hook.received
    expected = sending.sign("its own secret", headers["X-Wfapp-Timestamp"], body)
    assert headers["X-Wfapp-Signature"] == expected
    settings.WFAPP_WEBHOOK_URLS = [hook.url, "https://other.example.com/hook"]
    [problem] = [m for m in run_checks(tags=["wfapp"]) if m.id == "wfapp.E102"]
    assert "https://other.example.com/hook" in problem.msg and hook.url not in problem.msg


def test_a_pass_that_outlasts_a_claim_sends_no_delivery_twice(
    transactional_db: None, workflows: None, hook: Hook, settings: Any
) -> None:
    settings.WFAPP_WEBHOOK_URLS = [f"{hook.url}/{n}" for n in range(3)]
    _waiting_run()
    outbox.collect()
    first: list[int] = []

    def slow_first_send(body: bytes) -> None:
        # While the first delivery is being sent, another process passes when every claim made
        # at the start of this pass would have run out.
        if not first:
            first.append(json.loads(body)["delivery"])
            sending.send_due(now=timezone.now() + sending.claim_length() + timedelta(seconds=1))

    hook.on_receive = slow_first_send
    sending.send_due()
    sent = [json.loads(body)["delivery"] for _, body in hook.received]
    # The delivery in flight is all a claim covers (its send is bounded by the timeouts);
    # the others are claimed when their turn comes, so each goes out once.
    later = [pk for pk in sent if pk != first[0]]
    assert sorted(later) == sorted(set(later)) and len(set(later)) == 2
    assert set(Delivery.objects.values_list("status", flat=True)) == {"sent"}


async def test_assignees_who_may_not_view_the_workflow_are_not_told(
    engine_runtime: Any, settings: Any
) -> None:
    from tests.wfapp.human_flows import PATHS as HUMAN
    from tests.wfapp.test_assignment import waiting_run

    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *HUMAN.values()]
    await sync_to_async(_mailable)("bea", "buyers")
    await sync_to_async(_mailable)("cid", "outsiders")
    buyers = await Group.objects.aget(name="buyers")
    await WorkflowAccess.objects.acreate(workflow="assigned", group=buyers, may_answer=True)
    await waiting_run("assigned", {"assignees": ["bea", "cid"]})
    await sync_to_async(outbox.collect)()
    targets = [t async for t in Delivery.objects.values_list("target", flat=True)]
    assert targets == ["bea@example.com"]


async def test_stopping_the_notifier_waits_for_the_pass_in_flight(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The runtime closes its connections (and a test its database) once the notifier is
    stopped: a pass still querying in its thread then would hold a transaction open behind it."""
    from wfapp.notify import pump as pump_module

    settings.WFAPP_NOTIFY_SECONDS = 0
    started, release, seen = threading.Event(), threading.Event(), []

    def slow_pass() -> int:
        started.set()
        release.wait(10)
        seen.append("pass ended")
        return 0

    monkeypatch.setattr(pump_module, "pump_and_close", slow_pass)
    notifier = asyncio.create_task(pump_module.run_forever())
    assert await asyncio.to_thread(started.wait, 10)
    notifier.cancel()
    asyncio.get_running_loop().call_later(0.2, release.set)
    with pytest.raises(asyncio.CancelledError):
        await notifier
    assert seen == ["pass ended"]
