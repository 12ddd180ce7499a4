"""The run page's state as of an event and the changes between two: readable, shareable as a
URL, and a selection that does not exist is a clear 422 that changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from wfapp.models import Event
from wfapp.web.run_state import Entry
from wfapp.web.state_diff import Change, Snapshot, diff

FRAGMENT = {"HTTP_HX_REQUEST": "true", "HTTP_HX_TARGET": "run-compare"}


@pytest.fixture(autouse=True)
def _flows(settings: Any) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, "tests.web.flows:tally"]


def _seq(run: str, path_end: str) -> int:
    """The seq of the event carrying the output of the node whose path ends so."""
    rows = Event.objects.filter(session_id=run, node_path__endswith=path_end, data__has_key="output")
    return int(rows.values_list("seq", flat=True).get())


def _snapshot(seq: int, **data: Any) -> Snapshot:
    return Snapshot(seq, Entry(seq, 0.0, "output", "", "Output"), **data)


def test_diff_names_each_place_that_changed_in_words() -> None:
    before = _snapshot(1, status="running", state={"count": 1, "items": ["apple"], "owner": "ann"})
    after = _snapshot(
        2,
        status="completed",
        state={"count": 2, "items": ["apple", "pear"], "checked": True},
        outputs={"wf@1/step@1": {"total": 3}},
    )
    changes, more = diff(before, after)
    assert more == 0
    assert changes == [
        Change("Status", "changed", "running", "completed"),
        Change("State › Count", "changed", "1", "2"),
        Change("State › Items › item 2", "added", "", "pear"),
        Change("State › Owner", "removed", "ann", ""),
        Change("State › Checked", "added", "", "Yes"),
        Change("Output of wf@1/step@1", "added", "", "Total: 3"),
    ]
    assert diff(after, after) == ([], 0)


def test_the_page_shows_the_state_as_of_an_event(operator_client: Client, start_run) -> None:
    run = start_run("web_tally", {})
    first = _seq(run, "/count_in@1")
    html = operator_client.get(reverse("run", args=[run]), {"at": first}).content.decode()
    assert f"State as of #{first}" in html
    panel = html.split('id="run-compare"')[1].split("</section>")[0]
    assert 'id="compare-state"' in panel and "apple" in panel and "pear" not in panel
    assert "web_tally@1/count_in@1" in panel and "count_more" not in panel
    assert f'data-at="{first}"' in html
    # Each timeline event links to its own state.
    assert f'href="?at={first}#run-compare"' in html


def test_the_changes_between_two_events_as_a_fragment_with_a_shareable_url(
    operator_client: Client, start_run
) -> None:
    run = start_run("web_tally", {})
    first, second = _seq(run, "/count_in@1"), _seq(run, "/count_more@1")
    response = operator_client.get(reverse("run", args=[run]), {"at": second, "from": first}, **FRAGMENT)
    assert response.status_code == 200
    assert response["HX-Push-Url"] == f"/runs/{run}/?at={second}&from={first}"
    html = response.content.decode()
    assert html.lstrip().startswith('<section class="card" id="run-compare"')
    assert f"Changes from #{first} to #{second}" in html
    assert (
        '<tr class="diff-added"><th scope="row">State › Items › item 2 <span class="diff-kind">added</span>'
        in html
    )
    assert '<tr class="diff-added"><th scope="row">State › Checked' in html and "Owner" not in html
    assert "Output of web_tally@1/count_more@1" in html
    assert "{" not in html.split('id="compare-diff"')[1].split("</table>")[0]  # words, not JSON


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"at": "999"}, "This run has no event #999; its events are #1 to #"),
        ({"at": "0"}, "This run has no event #0"),
        ({"at": "abc"}, "The selected event must be a number (its # in the timeline); got &#x27;abc&#x27;"),
        ({"at": "2", "from": "-4"}, "This run has no event #-4"),
    ],
)
def test_a_selection_that_does_not_exist_is_422_and_says_why(
    operator_client: Client, start_run, query: dict[str, str], message: str
) -> None:
    run = start_run("web_tally", {})
    events = Event.objects.filter(session_id=run).count()
    page = operator_client.get(reverse("run", args=[run]), query)
    assert page.status_code == 422 and message in page.content.decode()
    fragment = operator_client.get(reverse("run", args=[run]), query, **FRAGMENT)
    assert fragment.status_code == 422 and "HX-Push-Url" not in fragment
    assert message in fragment.content.decode() and 'id="compare-error"' in fragment.content.decode()
    assert Event.objects.filter(session_id=run).count() == events
