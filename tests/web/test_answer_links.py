"""Signed answer links: GET only shows, POST answers once as the recipient; used, expired,
tampered and withdrawn links get a clear page and answer nothing; off unless enabled."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from tests.web.conftest import make_user, pending
from wfapp.models import AnswerAttempt, AnswerLink, Interrupt, InterruptStatus
from wfapp.runs import answer_links

APPROVE = {"f.approved": "true", "f.comment": "fine by mail"}


@pytest.fixture
def links_on(settings: Any) -> None:
    settings.WFAPP_ANSWER_LINKS = True
    settings.WFAPP_BASE_URL = "http://testserver"


@pytest.fixture
def question(db: None, start_run: Any) -> Interrupt:
    run = start_run()
    return pending(run)[0]


@pytest.fixture
def fin(db: None) -> User:
    return make_user("fin", may_answer=True)  # an operator, in the groups the demo assigns


def _path(url: str | None) -> str:
    assert url is not None
    return url.removeprefix("http://testserver")


def test_get_only_shows_the_question(links_on: None, question: Interrupt, fin: User) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    for _ in range(3):  # a link-preview bot, a mail scanner, the person
        page = Client().get(path)
        assert page.status_code == 200
        assert (
            question.message in page.content.decode()
            and "Answering as <strong>fin</strong>" in page.content.decode()
        )
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING
    assert AnswerLink.objects.get().used_at is None


def test_post_answers_once_as_the_recipient(links_on: None, question: Interrupt, fin: User) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    browser = Client(enforce_csrf_checks=True)
    page = browser.get(path).content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert token is not None
    done = browser.post(path, {**APPROVE, "csrfmiddlewaretoken": token.group(1)})
    assert done.status_code == 200 and "Thank you" in done.content.decode()
    question.refresh_from_db()
    assert (question.status, question.answered_by) == (InterruptStatus.ANSWERED, "fin")
    assert question.answer == {"approved": True, "comment": "fine by mail"}
    again = browser.post(path, {**APPROVE, "csrfmiddlewaretoken": token.group(1)})
    assert again.status_code == 410 and "already used" in again.content.decode()
    assert Client().get(path).status_code == 410
    assert AnswerAttempt.objects.filter(actor="fin").count() == 1


def test_an_expired_link_answers_nothing(
    links_on: None, question: Interrupt, fin: User, settings: Any
) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    AnswerLink.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    response = Client().post(path, APPROVE)
    assert response.status_code == 410 and "expired" in response.content.decode()
    AnswerLink.objects.update(expires_at=timezone.now() + timedelta(hours=1))
    settings.WFAPP_ANSWER_LINK_HOURS = -1  # the signature's own age is past it too
    response = Client().post(path, APPROVE)
    assert response.status_code == 410 and "expired" in response.content.decode()
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING


def test_a_tampered_link_answers_nothing(links_on: None, question: Interrupt, fin: User) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    token = path.split("/")[2]
    for bad in (token[:-2] + ("AA" if not token.endswith("AA") else "BB"), token[:10], "x" * 40):
        response = Client().post(f"/answer-link/{bad}/", APPROVE)
        assert response.status_code == 410, bad
        assert "not valid" in response.content.decode()
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING


def test_an_invalid_answer_keeps_the_link(links_on: None, question: Interrupt, fin: User) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    refused = Client().post(path, {"f.comment": "no decision"})
    assert refused.status_code == 422 and "Choose Approve or Reject" in refused.content.decode()
    assert Client().post(path, APPROVE).status_code == 200


def test_a_recipient_who_may_no_longer_answer(links_on: None, question: Interrupt) -> None:
    vera = make_user("vera", may_answer=False)
    path = _path(answer_links.issue(question.pk, vera))
    response = Client().post(path, APPROVE)
    assert response.status_code == 410 and "vera may no longer answer" in response.content.decode()
    question.refresh_from_db()
    assert question.status == InterruptStatus.PENDING


def test_a_question_answered_elsewhere(links_on: None, question: Interrupt, fin: User) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    Interrupt.objects.filter(pk=question.pk).update(status=InterruptStatus.ANSWERED, answered_by="olga")
    response = Client().get(path)
    assert response.status_code == 410 and "answered by olga" in response.content.decode()


def test_links_are_off_unless_enabled(question: Interrupt, fin: User, settings: Any) -> None:
    assert answer_links.issue(question.pk, fin) is None
    settings.WFAPP_ANSWER_LINKS = True
    path = _path(answer_links.issue(question.pk, fin).replace(settings.WFAPP_BASE_URL, "http://testserver"))
    settings.WFAPP_ANSWER_LINKS = False
    assert Client().get(path).status_code == 404
    assert Client().post(path, APPROVE).status_code == 404


def test_a_recipient_who_lost_access_no_longer_sees_the_question(
    links_on: None, question: Interrupt, fin: User
) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    assert question.message in Client().get(path).content.decode()
    fin.groups.clear()  # access taken away after the mail went out
    fin.user_permissions.clear()
    page = Client().get(path)
    assert page.status_code == 410 and "fin may no longer answer this question" in page.content.decode()
    assert question.message not in page.content.decode()


def test_link_pages_are_not_stored_and_tokens_stay_out_of_the_log(
    links_on: None, question: Interrupt, fin: User, caplog: pytest.LogCaptureFixture
) -> None:
    path = _path(answer_links.issue(question.pk, fin))
    token = path.split("/")[-2]
    assert "no-store" in Client().get(path)["Cache-Control"]
    assert Client().post(path, APPROVE).status_code == 200
    with caplog.at_level("WARNING", logger="django.request"):
        used = Client().get(path)  # used: 410, logged by Django
        assert Client().get(path[:-5] + "AAAA/").status_code == 410  # tampered
    assert used.status_code == 410 and "no-store" in used["Cache-Control"]
    logged = "\n".join(record.getMessage() for record in caplog.records)
    assert "/answer-link/[redacted]/" in logged
    assert token not in logged and token[:-4] not in logged


def test_the_token_page_is_not_stored(fin: User) -> None:
    browser = Client()
    browser.force_login(fin)
    assert "no-store" in browser.get("/api/tokens/")["Cache-Control"]
