"""Saved filters: each user's own, per page; saved from the page's filters, applied, deleted."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.test import Client

from tests.web.conftest import client_for
from wfapp.models import SavedFilter


def _save(client: Client, page: str, name: str, **filters: str) -> object:
    return client.post("/filters/save/", {"page": page, "name": name, **filters})


def test_a_saved_runs_filter_is_listed_as_a_link_to_the_same_list(operator_client: Client) -> None:
    response = _save(operator_client, "runs", "Ann's failures", text="Ann", status="failed", after="x")
    assert response.status_code == 302
    assert response["Location"] == "/runs/?status=failed&text=Ann"  # the cursor is not a filter
    page = operator_client.get("/runs/").content.decode()
    assert 'href="/runs/?status=failed&amp;text=Ann">Ann&#x27;s failures</a>' in page


def test_saving_a_name_again_replaces_it(operator_client: Client, operator: User) -> None:
    _save(operator_client, "inbox", "travel", q="travel")
    _save(operator_client, "inbox", "travel", q="taxi", sort="newest")
    [row] = SavedFilter.objects.filter(user=operator)
    assert (row.page, row.query) == ("inbox", "q=taxi&sort=newest")


def test_filters_are_each_users_own(operator_client: Client, other_operator: User) -> None:
    _save(operator_client, "runs", "mine", by="olga")
    other = client_for(other_operator)
    assert "mine" not in other.get("/runs/").content.decode()
    row = SavedFilter.objects.get()
    assert other.post(f"/filters/{row.pk}/delete/").status_code == 404  # not theirs: kept
    assert SavedFilter.objects.count() == 1
    assert operator_client.post(f"/filters/{row.pk}/delete/").status_code == 302
    assert not SavedFilter.objects.exists()


def test_bad_filters_are_not_saved_and_say_why(operator_client: Client) -> None:
    cases = [
        (
            {"page": "runs", "name": "x", "started_from": "soon"},
            "Started from &#x27;soon&#x27; is not a date",
        ),
        ({"page": "runs", "name": "  "}, "Give the filter a name."),
        ({"page": "runs", "name": "n" * 81, "text": "a"}, "longer than 80 characters"),
        ({"page": "inbox", "name": "all"}, "Choose some filters first"),
    ]
    for data, message in cases:
        response = operator_client.post("/filters/save/", data, headers={"HX-Request": "true"})
        assert response.status_code == 422
        assert message in response.content.decode()
    assert operator_client.post("/filters/save/", {"page": "admin", "name": "x"}).status_code == 404
    assert not SavedFilter.objects.exists()


def test_a_save_from_the_page_answers_with_the_list_again(operator_client: Client) -> None:
    response = _save(operator_client, "runs", "slow", min_duration="1h")
    assert response.status_code == 302
    again = operator_client.post(
        "/filters/save/",
        {"page": "runs", "name": "quick", "max_duration": "5m"},
        headers={"HX-Request": "true"},
    )
    html = again.content.decode()
    assert again.status_code == 200 and 'id="saved-filters"' in html
    assert ">quick</a>" in html and ">slow</a>" in html


def test_a_saved_inbox_filter_keeps_the_tab_and_the_sort(operator_client: Client, operator: User) -> None:
    _save(operator_client, "inbox", "my overdue", tab="overdue", sort="due", q="taxi")
    _save(operator_client, "inbox", "plain", tab="all", sort="oldest", workflow="batch_review")
    _save(operator_client, "inbox", "odd", tab="nobody's", sort="<script>", q="x")
    queries = dict(SavedFilter.objects.filter(user=operator).values_list("name", "query"))
    assert queries == {
        "my overdue": "q=taxi&sort=due&tab=overdue",
        "plain": "workflow=batch_review",
        "odd": "q=x",
    }
    page = operator_client.get("/").content.decode()
    assert 'href="/?q=taxi&amp;sort=due&amp;tab=overdue">my overdue</a>' in page
