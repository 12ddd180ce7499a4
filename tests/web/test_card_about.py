"""A question's card links to its question page and shows the comments about it (issue 27, item 12)."""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from django.contrib.auth.models import User
from django.core import mail

from tests.web.conftest import client_for, make_user, pending
from wfapp.human.comments import add_comment
from wfapp.models import Delivery, Notice
from wfapp.notify.pump import pump


def test_a_card_links_to_its_page_and_shows_the_comments_about_it(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    run = start_run("expense_approval")
    manager, finance = pending(run)
    async_to_sync(add_comment)(run, "Receipt is blurry", user=olga, interrupt_pk=manager.pk)
    async_to_sync(add_comment)(run, "About the run itself", user=olga)
    inbox = client_for(olga).get("/").content.decode()
    manager_card = inbox[
        inbox.index(f'id="interrupt-{manager.pk}"') : inbox.index(f'id="interrupt-{finance.pk}"')
    ]
    assert f'href="/interrupts/{manager.pk}/"' in manager_card
    assert "<strong>olga</strong>: Receipt is blurry" in manager_card
    assert "About the run itself" not in inbox  # a comment on the run is the timeline's
    finance_card = inbox[inbox.index(f'id="interrupt-{finance.pk}"') :]
    assert "Receipt is blurry" not in finance_card and f'href="/interrupts/{finance.pk}/"' in finance_card
    page = client_for(olga).get(f"/interrupts/{manager.pk}/").content.decode()
    assert "<strong>olga</strong>: Receipt is blurry" in page
    run_page = client_for(olga).get(f"/runs/{run}/").content.decode()
    assert "<strong>olga</strong>: Receipt is blurry" in run_page


def test_a_comment_mentioning_a_user_notifies_them(db: None, start_run: Any) -> None:
    olga = make_user("olga", may_answer=True)
    make_user("piet", may_answer=True)
    for name in ("piet", "olga"):
        User.objects.filter(username=name).update(email=f"{name}@example.com")
    run = start_run("expense_approval")
    manager, _ = pending(run)
    mail.outbox.clear()
    response = client_for(olga).post(
        f"/runs/{run}/comment/",
        {"text": "@piet can you check the hotel? cc @nobody, @olga", "question": manager.pk},
    )
    assert response.status_code == 302
    notice = Notice.objects.get(kind="mentioned")
    told = sorted(d.recipient.username for d in Delivery.objects.filter(notice=notice))
    assert told == ["piet"]  # not the author, not a name that is no one
    pump()
    [sent] = [m for m in mail.outbox if "mentioned" in m.subject]
    assert sent.to == ["piet@example.com"]
    assert sent.subject.startswith("[wfapp] olga mentioned you: @piet can you check the hotel?")
    assert f"/interrupts/{manager.pk}/" in sent.body
