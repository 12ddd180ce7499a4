"""Pages cost a fixed number of queries whatever the data: 10,000 pending, 5,000 events."""

from __future__ import annotations

import time

import pytest
from django.test import Client
from django.urls import reverse

from wfapp.models import Event, Interrupt, Session

SCHEMA = {
    "type": "object",
    "properties": {"approved": {"type": "boolean"}, "comment": {"type": "string", "default": ""}},
    "required": ["approved"],
}


@pytest.fixture
def many_pending(db: None) -> Session:
    session = Session.objects.create(id="bulk-run", workflow="expense_approval", status="waiting", input={})
    Interrupt.objects.bulk_create(
        Interrupt(
            session=session,
            interrupt_id=f"ask-{i}",
            request_seq=i + 1,
            workflow="expense_approval",
            node_path=f"expense_approval@1/manager_review@{i + 1}",
            message=f"Question {i}",
            payload={"n": i},
            response_schema=SCHEMA,
        )
        for i in range(10_000)
    )
    return session


@pytest.fixture
def long_run(db: None) -> Session:
    session = Session.objects.create(
        id="long-run", workflow="batch_review", status="running", input={}, last_seq=5000
    )
    now = time.time()
    kinds = ("started", "output", "completed", "state")
    Event.objects.bulk_create(
        Event(
            session=session,
            seq=seq,
            kind=kinds[seq % 4],
            node_path=f"batch_review@1/review_item@1/review_item@{seq // 4 + 1}",
            author="batch_review",
            timestamp=now + seq,
            data={"output": {"i": seq}} if seq % 4 == 1 else ({"state": {"k": seq}} if seq % 4 == 3 else {}),
        )
        for seq in range(1, 5001)
    )
    return session


def test_inbox_with_10000_pending(
    operator_client: Client, many_pending, django_assert_max_num_queries
) -> None:
    operator_client.get(reverse("inbox"))  # warm the session and permission caches like a real visit
    with django_assert_max_num_queries(10):  # one: your saved filters; one: the cards' runs
        response = operator_client.get(reverse("inbox"))
    html = response.content.decode()
    assert html.count('class="card inbox-item"') == 25
    assert "10000 pending" in html
    assert 'id="inbox-more"' in html


def test_inbox_next_page_and_search(
    operator_client: Client, many_pending, django_assert_max_num_queries
) -> None:
    first = operator_client.get(reverse("inbox"), {"sort": "newest"}, HTTP_HX_REQUEST="true").content.decode()
    assert "Question 9999" in first
    cursor = first.split("after=")[1].split('"')[0]
    with django_assert_max_num_queries(9):  # one of them: the cards' runs
        more = operator_client.get(
            reverse("inbox"), {"sort": "newest", "after": cursor}, HTTP_HX_REQUEST="true"
        )
    html = more.content.decode()
    assert "Question 9974" in html and "Question 9999" not in html
    found = operator_client.get(
        reverse("inbox"), {"q": "Question 4242"}, HTTP_HX_REQUEST="true"
    ).content.decode()
    assert found.count('class="card inbox-item"') == 1


def test_run_page_with_5000_events(operator_client: Client, long_run, django_assert_max_num_queries) -> None:
    operator_client.get(reverse("inbox"))
    with django_assert_max_num_queries(11):  # one of them: whether you may comment (the workflow's rules)
        response = operator_client.get(reverse("run", args=[long_run.pk]))
    html = response.content.decode()
    assert html.count('<li class="kind-') == 100
    assert 'id="event-5000"' in html and 'id="event-4900"' not in html
    assert "Load older events" in html
    older = operator_client.get(
        reverse("run-events", args=[long_run.pk]), {"before": 4901}, HTTP_HX_REQUEST="true"
    )
    assert 'id="event-4900"' in older.content.decode() and 'id="event-4801"' in older.content.decode()
    assert 'id="event-4800"' not in older.content.decode()


@pytest.fixture
def many_runs(db: None) -> None:
    """10,000 runs, each answered by someone, every third retried, every fifth cancelled."""
    Session.objects.bulk_create(
        Session(
            id=f"run-{i:05}", workflow="expense_approval", status="cancelled" if i % 5 == 0 else "completed"
        )
        for i in range(10_000)
    )
    now = time.time()

    def acts(i: int) -> list[Event]:
        done = [
            Event(session_id=f"run-{i:05}", seq=1, kind="answer", author=f"person-{i % 7}", timestamp=now)
        ]
        if i % 3 == 0:
            done.append(Event(session_id=f"run-{i:05}", seq=2, kind="retry", author="rita", timestamp=now))
        if i % 5 == 0:
            done.append(
                Event(
                    session_id=f"run-{i:05}",
                    seq=3,
                    kind="status",
                    author="carl",
                    timestamp=now,
                    data={"status": "cancelled"},
                )
            )
        return done

    Event.objects.bulk_create((event for i in range(10_000) for event in acts(i)), batch_size=2000)


def test_runs_list_with_10000_runs_names_their_people(
    operator_client: Client, many_runs, django_assert_max_num_queries
) -> None:
    operator_client.get(reverse("runs"))
    with django_assert_max_num_queries(9):  # two of them: who cancelled, who answered and retried
        response = operator_client.get(reverse("runs"))
    html = response.content.decode()
    assert html.count('<tr id="run-row-') == 50
    assert html.count("answered by person-") == 50
    assert html.count("retried by rita") == 17  # run-09999 down to run-09950: every third
    assert html.count('<span class="by">by carl</span>') == 10
