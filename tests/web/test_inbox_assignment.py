"""Issue 17 in the inbox: tabs, due times and overdue badges, claim / release / reassign, quorum cards."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import Group, Permission, User
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from tests.web.conftest import BIG_EXPENSE, client_for, make_user, pending
from wfapp.models import Interrupt

HX = {"HTTP_HX_REQUEST": "true"}
HUGE = {**BIG_EXPENSE, "amount": 25000, "employee": "Cy"}


def member(name: str, *groups: str) -> User:
    user = make_user(name, may_answer=True)
    user.groups.set([Group.objects.get(name=group) for group in groups])
    return User.objects.get(pk=user.pk)


def cards(client: Client, **params: str) -> str:
    return client.get(reverse("inbox"), params).content.decode()


def by_id(run: str, interrupt_id: str) -> Interrupt:
    return Interrupt.objects.get(session_id=run, interrupt_id=interrupt_id, status="pending")


def test_tabs_show_what_is_assigned_to_me_and_my_groups(start_run) -> None:
    run = start_run()
    fay = client_for(member("fay", "finance"))
    manager, finance = by_id(run, "manager-approval"), by_id(run, "finance-approval")
    html = cards(fay, tab="groups")
    assert f'id="interrupt-{finance.pk}"' in html and f'id="interrupt-{manager.pk}"' not in html
    assert "For Finance" in html and 'id="tab-groups" aria-current="page"' in html
    assert "interrupt-" not in cards(fay, tab="mine").split('id="inbox-items"')[1]
    assert "interrupt-" not in cards(fay, tab="unassigned").split('id="inbox-items"')[1]
    everything = cards(fay)
    assert f'id="interrupt-{manager.pk}"' in everything  # others' questions stay visible

    claimed = fay.post(reverse("interrupt-claim", args=[finance.pk]), **HX)
    assert claimed.status_code == 200 and "You hold this" in claimed.content.decode()
    assert "Claimed by <strong>fay</strong>" in cards(client_for(member("fab", "finance")))  # to others
    assert f'id="interrupt-{finance.pk}"' in cards(fay, tab="mine")
    released = fay.post(reverse("interrupt-unclaim", args=[finance.pk]), **HX)
    assert "Claimed by" not in released.content.decode() and by_id(run, "finance-approval").claimed_by == ""


def test_a_question_for_others_is_refused_with_the_reason(start_run) -> None:
    run = start_run()
    fay = client_for(member("fay", "finance"))
    manager = by_id(run, "manager-approval")
    refused = fay.post(reverse("answer", args=[manager.pk]), {"f.approved": "true"}, **HX)
    assert refused.status_code == 403
    assert "fay may not answer: this question is assigned to group:managers" in refused.content.decode()
    assert by_id(run, "manager-approval").status == "pending"
    grabbed = fay.post(reverse("interrupt-claim", args=[manager.pk]), **HX)
    assert grabbed.status_code == 403 and "may not claim this question" in grabbed.content.decode()


def test_due_times_overdue_badges_and_sorting_by_due(start_run) -> None:
    first = start_run(node_input={**BIG_EXPENSE, "amount": 500, "employee": "Bo"})
    second = start_run(node_input={**BIG_EXPENSE, "amount": 600, "employee": "Di"})
    olga = client_for(make_user("olga", may_answer=True))
    late = by_id(first, "manager-approval")
    Interrupt.objects.filter(pk=late.pk).update(due_at=timezone.now() - timedelta(hours=1))
    html = cards(olga, tab="overdue")
    assert f'id="interrupt-{late.pk}"' in html and "Overdue</span> was due" in html
    assert f'id="interrupt-{by_id(second, "manager-approval").pk}"' not in html
    Interrupt.objects.filter(pk=late.pk).update(due_at=timezone.now() + timedelta(days=9))
    soonest = cards(olga, sort="due")
    assert soonest.index("claims 600") < soonest.index("claims 500")  # due in 5 days before 9


def test_a_quorum_card_counts_approvals_and_names_who_gave_them(start_run) -> None:
    run = start_run(node_input=HUGE)
    fred, fiona = (client_for(member(name, "finance")) for name in ("fred", "fiona"))
    finance = by_id(run, "finance-approval")
    assert "0 of 2 approvals" in cards(fred)
    once = fred.post(reverse("answer", args=[finance.pk]), {"f.approved": "true"}, **HX)
    assert once.status_code == 200 and "1 of 2 approvals: fred" in once.content.decode()
    twice = fred.post(reverse("answer", args=[finance.pk]), {"f.approved": "true"}, **HX)
    assert twice.status_code == 403 and "fred has already approved" in twice.content.decode()
    done = fiona.post(reverse("answer", args=[finance.pk]), {"f.approved": "true"}, **HX)
    assert done.status_code == 200 and "Answered by fiona" in done.content.decode()
    assert [given["actor"] for given in Interrupt.objects.get(pk=finance.pk).answer] == ["fred", "fiona"]


def test_only_an_admin_reassigns(start_run) -> None:
    run = start_run()
    finance = by_id(run, "finance-approval")
    fay = client_for(member("fay", "finance"))
    refused = fay.post(reverse("interrupt-reassign", args=[finance.pk]), {"to": "fay"}, **HX)
    assert refused.status_code == 403 and "may not reassign" in refused.content.decode()
    boss = make_user("boss", may_answer=True)
    boss.user_permissions.add(Permission.objects.get(codename="reassign_interrupt"))
    boss_client = client_for(User.objects.get(pk=boss.pk))
    page = boss_client.get(reverse("interrupt", args=[finance.pk])).content.decode()
    assert "Reassign to" in page
    unknown = boss_client.post(reverse("interrupt-reassign", args=[finance.pk]), {"to": "ghost"}, **HX)
    assert unknown.status_code == 409 and "no known user or group: ghost" in unknown.content.decode()
    moved = boss_client.post(reverse("interrupt-reassign", args=[finance.pk]), {"to": "fay"})
    assert moved.status_code == 302
    row = Interrupt.objects.get(pk=finance.pk)
    assert (row.assignees, row.claimed_by) == ("|fay|", "fay")
    assert len(pending(run)) == 2
