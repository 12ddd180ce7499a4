"""Finding runs: the runs list's GET filters (text in input/output, time range, status, starter,
duration), parsed, applied on the database, refused with a message when bad; the API's list too.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import parse_qsl

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wfapp.models import Session
from wfapp.web import run_search
from wfapp.web.run_search import BadSearch, RunSearch

T0 = datetime(2026, 3, 10, 9, 0, tzinfo=UTC)


def _run(pk: str, *, user: User | None = None, status: str = "completed", start: datetime = T0,
         took: timedelta = timedelta(seconds=30), input: Any = None, output: Any = None) -> Session:  # fmt: skip
    Session.objects.create(
        id=pk, workflow="expense_approval", status=status, input=input, output=output, created_by=user
    )
    Session.objects.filter(pk=pk).update(created_at=start, updated_at=start + took)
    return Session.objects.get(pk=pk)


@pytest.fixture
def runs(operator: User, other_operator: User) -> None:
    _run("run-ann", user=operator, input={"employee": "Ann Smith", "amount": 1500}, output={"approved": True})
    _run("run-zoe", user=other_operator, input={"employee": "Zoë Brandt"}, status="failed",
         start=T0 + timedelta(days=1), took=timedelta(hours=3))  # fmt: skip
    _run("run-bob", user=None, input={"employee": "Bob"}, output={"comment": "ask Ann first"},
         status="waiting", start=T0 + timedelta(days=2), took=timedelta(minutes=5))  # fmt: skip


def _listed(client: Client, query: str) -> list[str]:
    response = client.get("/runs/?" + query)
    assert response.status_code == 200, response.content.decode()[:500]
    return [run.pk for run in response.context["page"].items]


def test_parse_reads_every_filter_and_links_back_to_it() -> None:
    params = {"text": " Ann ", "status": "failed", "by": "olga", "started_from": "2026-03-10",
              "started_to": "2026-03-11T12:00", "min_duration": "5m", "max_duration": "2h"}  # fmt: skip
    search = run_search.parse(params)
    assert search.text == "Ann"
    assert search.start_bounds() == (T0 - timedelta(hours=9), datetime(2026, 3, 11, 12, tzinfo=UTC))
    assert search.duration_bounds() == (timedelta(minutes=5), timedelta(hours=2))
    assert run_search.parse(dict(parse_qsl(search.query()))) == search
    assert not run_search.parse({}).active


def test_a_date_as_started_to_includes_that_whole_day() -> None:
    assert run_search.parse({"started_to": "2026-03-10"}).start_bounds()[1] == T0.replace(hour=0) + timedelta(
        days=1
    )


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"status": "done"}, "Status 'done' is not one of"),
        ({"started_from": "last week"}, "Started from 'last week' is not a date"),
        ({"started_to": "2026-02-30"}, "Started to '2026-02-30' is not a date"),
        ({"min_duration": "-5"}, "Min duration '-5' is not a duration"),
        ({"max_duration": "3 weeks"}, "Max duration '3 weeks' is not a duration"),
        ({"text": "x" * 201}, "longer than 200 characters"),
    ],
)
def test_bad_values_are_named(params: dict[str, str], message: str) -> None:
    with pytest.raises(BadSearch) as refused:
        run_search.parse(params)
    assert message in str(refused.value)


def test_every_bad_value_is_named_at_once() -> None:
    with pytest.raises(BadSearch) as refused:
        run_search.parse({"status": "x", "min_duration": "y"})
    assert len(refused.value.problems) == 2


def test_text_searches_input_and_output(operator_client: Client, runs: None) -> None:
    assert _listed(operator_client, "text=ann") == ["run-bob", "run-ann"]  # Bob's output names Ann
    assert _listed(operator_client, "text=smith") == ["run-ann"]
    assert _listed(operator_client, "text=Zo%C3%AB") == ["run-zoe"]  # stored escaped on SQLite
    assert _listed(operator_client, "text=%22employee%22%3A+%22Bob") == ["run-bob"]  # quotes too
    assert _listed(operator_client, "text=nobody") == []


def test_time_range_status_starter_and_duration(operator_client: Client, runs: None) -> None:
    assert _listed(operator_client, "started_from=2026-03-11") == ["run-bob", "run-zoe"]
    assert _listed(operator_client, "started_to=2026-03-11") == ["run-zoe", "run-ann"]
    assert _listed(operator_client, "started_from=2026-03-11T09:00&started_to=2026-03-11T09:01") == [
        "run-zoe"
    ]
    assert _listed(operator_client, "status=waiting") == ["run-bob"]
    assert _listed(operator_client, "by=OLGA") == ["run-ann"]
    assert _listed(operator_client, "min_duration=5m") == ["run-bob", "run-zoe"]
    assert _listed(operator_client, "max_duration=300") == ["run-bob", "run-ann"]
    assert _listed(operator_client, "min_duration=1h&text=zo") == ["run-zoe"]
    assert _listed(operator_client, "min_duration=2h&max_duration=1h") == []  # an empty range


def test_bad_filters_show_the_problem_and_no_runs(operator_client: Client, runs: None) -> None:
    response = operator_client.get("/runs/?started_from=yesterday&status=done")
    assert response.status_code == 422
    assert response.context["page"].items == []
    page = response.content.decode()
    assert "These filters cannot be applied, so no runs are listed" in page
    assert "Started from &#x27;yesterday&#x27; is not a date" in page
    assert 'value="yesterday"' in page  # kept in the form, to correct
    assert "run-ann" not in page


def test_the_more_link_keeps_the_filters(operator_client: Client, operator: User) -> None:
    for i in range(51):
        _run(f"run-{i:02}", user=operator, input={"employee": "Many"}, start=T0 + timedelta(minutes=i))
    page = operator_client.get("/runs/?text=many&by=olga").content.decode()
    assert "?text=many&amp;by=olga&amp;after=" in page


def test_a_text_search_reads_every_run(operator_client: Client, operator: User, runs: None) -> None:
    filler = [
        Session(id=f"bulk-{i:05}", workflow="expense_approval", input={"employee": f"Filler {i}"})
        for i in range(6000)
    ]
    Session.objects.bulk_create(filler, batch_size=500)  # all newer than the fixture's runs
    assert _listed(operator_client, "text=smith") == ["run-ann"]  # older than the newest 5,000
    assert _listed(operator_client, "text=filler+4321") == ["bulk-04321"]
    found = operator_client.get("/api/v1/runs?text=SMITH")
    assert [item["id"] for item in found.json()["items"]] == ["run-ann"]


def test_the_index_follows_changes_to_input_and_output(operator_client: Client, runs: None) -> None:
    Session.objects.filter(pk="run-bob").update(output={"comment": "Paid to Quentin"})
    assert _listed(operator_client, "text=quentin") == ["run-bob"]
    assert _listed(operator_client, "text=ann") == ["run-ann"]  # Bob's old output is gone
    Session.objects.filter(pk="run-ann").delete()
    assert _listed(operator_client, "text=smith") == []
    assert _listed(operator_client, "text=*") == []  # GLOB's and LIKE's wildcards are plain text
    assert _listed(operator_client, "text=%25") == []
    assert _listed(operator_client, "text=zo") == ["run-zoe"]  # shorter than a trigram: still exact


def test_live_inserts_follow_the_same_filters(runs: None) -> None:
    zoe = Session.objects.get(pk="run-zoe")
    assert run_search.matches(zoe, run_search.parse({"text": "zoë", "by": "piet", "min_duration": "1h"}))
    assert not run_search.matches(zoe, run_search.parse({"text": "ann"}))
    assert not run_search.matches(zoe, run_search.parse({"started_to": "2026-03-10"}))


def test_the_api_takes_the_same_filters(operator_client: Client, runs: None) -> None:
    found = operator_client.get("/api/v1/runs?text=ann&started_from=2026-03-10&max_duration=1m")
    assert found.status_code == 200, found.content
    assert [item["id"] for item in found.json()["items"]] == ["run-ann"]
    refused = operator_client.get("/api/v1/runs?min_duration=soon")
    assert refused.status_code in (400, 422)


PARAM = st.sampled_from([*RunSearch.__dataclass_fields__, "after", "other"])
VALUE = st.one_of(st.text(max_size=40), st.sampled_from(["2026-03-10", "9999-12-31", "0001-01-01", "5m", "-1",
                                                          "1" * 30, "failed", "\x00", "2026-03-10T25:00"]))  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(params=st.dictionaries(PARAM, VALUE, max_size=5))
@example(params={"started_to": "9999-12-31", "started_from": "0001-01-01T00:00+14:00"})
@example(params={"text": "%_\\", "min_duration": "9999999d"})
def test_no_filter_values_give_a_500(operator_client: Client, runs: None, params: dict[str, str]) -> None:
    response = operator_client.get("/runs/", params)
    assert response.status_code in (200, 422)
    if response.status_code == 422:
        assert response.context["page"].items == []
        assert "These filters cannot be applied" in response.content.decode()
    api = operator_client.get("/api/v1/runs", {k: v for k, v in params.items() if k != "after"})
    assert api.status_code in (200, 400, 422)


def test_the_text_search_is_answered_from_the_index(runs: None) -> None:
    rows = run_search.apply(Session.objects.all(), run_search.parse({"text": "Smith"}))
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL enable_seqscan = off")  # too few rows for the planner to bother
            plan = rows.order_by().explain()  # unordered: the created_at index saves no sort
        assert (
            "wfapp_session_search_trgm" in plan and "wfapp_session_summary_trgm" in plan
        )  # input/output, summary
    else:
        assert "VIRTUAL TABLE INDEX 0:G1" in rows.explain()  # the GLOB on `body` handed to FTS5's index
    assert [run.pk for run in rows] == ["run-ann"]


def test_upgrading_indexes_the_runs_there_are(transactional_db: None) -> None:
    executor = MigrationExecutor(connection)
    executor.migrate([("wfapp", "0011_saved_filters")])
    with connection.cursor() as cursor:  # a run recorded before the index, as that schema held it
        cursor.execute(
            "INSERT INTO wfapp_session (id, workflow, version, status, input, output, created_at, updated_at,"
            " lease_epoch, last_seq, settled_seq) VALUES (%s, 'expense_approval', '', 'completed', %s, %s,"
            " %s, %s, 0, 0, 0)",
            ["old-run", '{"employee": "Olaf Oldtimer"}', '{"approved": true}', T0, T0],
        )
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes("wfapp"))
    rows = run_search.apply(Session.objects.all(), run_search.parse({"text": "oldtimer"}))
    assert [run.pk for run in rows] == ["old-run"]


def test_the_search_text_survives_undoing_and_redoing_its_trigger(transactional_db: None) -> None:
    _run("run-ann", input={"employee": "Ann Smith"})
    executor = MigrationExecutor(connection)
    executor.migrate([("wfapp", "0013_event_txid")])  # PostgreSQL: a generated column again
    Session.objects.filter(pk="run-ann").update(output={"comment": "paid"})
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes("wfapp"))
    Session.objects.filter(pk="run-ann").update(last_seq=3)  # neither input nor output
    for words in ("smith", "paid"):
        rows = run_search.apply(Session.objects.all(), run_search.parse({"text": words}))
        assert [run.pk for run in rows] == ["run-ann"]
    Session.objects.filter(pk="run-ann").update(output={"comment": "refunded"})
    assert not run_search.apply(Session.objects.all(), run_search.parse({"text": "paid"})).exists()
