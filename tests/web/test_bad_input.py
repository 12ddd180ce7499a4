"""Bad input at the dashboard's boundaries is a clear 4xx and writes nothing; never a 500.

Forms, JSON fields, answer POSTs and bulk ids, by example and under hypothesis. The Django
test client raises any exception a view lets through, so a 500 fails these tests loudly.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.web.conftest import pending
from tests.wfapp.helpers import last_attempt, log_and_inbox, refusals_since
from tests.wfapp.limit_flows import PATHS, nest
from wfapp.models import AnswerAttempt, Interrupt, InterruptStatus, Session

HX = {"HTTP_HX_REQUEST": "true"}
FORM = "application/x-www-form-urlencoded"
REFUSED = (400, 409, 410, 413, 422)


@pytest.fixture(autouse=True)
def limit_flows(settings: Any) -> None:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *PATHS.values()]


def written() -> tuple[Any, int]:
    """The log and the inbox rows, and where the audit trail stands (a refusal adds to it only)."""
    return log_and_inbox(), last_attempt()


def unchanged(before: tuple[Any, int]) -> bool:
    """Nothing written but, at most, the audit records of refusals (each one storable)."""
    refusals_since(before[1])
    return log_and_inbox() == before[0]


def free_question(start_run: Any) -> Interrupt:
    return pending(start_run("freeform", {"title": "t"}))[0]


# -- JSON fields and text fields -------------------------------------------------------------------


def test_a_start_form_json_field_nested_20000_deep_is_a_field_error(operator_client: Client) -> None:
    body = "f.title=t&f.data=" + "[" * 20_000 + "]" * 20_000  # raw brackets: 40 KB, under the size limit
    response = operator_client.post(reverse("workflow-start", args=["freeform"]), body, FORM, **HX)
    assert response.status_code == 422
    assert "This JSON is nested too deeply: at most 63 levels fit here." in response.content.decode()
    assert not Session.objects.exists()


def test_an_answer_json_field_too_deep_for_the_log_is_a_field_error(
    operator_client: Client, start_run
) -> None:
    row = free_question(start_run)
    before = written()
    data = {"f.note": "fine", "f.data": str(nest(250))}
    response = operator_client.post(reverse("answer", args=[row.pk]), data, **HX)
    assert response.status_code == 422
    assert "This JSON is nested 250 levels deep: at most 63 levels fit here." in response.content.decode()
    assert unchanged(before)
    deepest = {"f.note": "fine", "f.data": str(nest(63))}  # the answer object is the 64th level
    assert operator_client.post(reverse("answer", args=[row.pk]), deepest, **HX).status_code == 200
    assert Interrupt.objects.get(pk=row.pk).answer == {"note": "fine", "data": nest(63)}


@pytest.mark.parametrize("field", ["f.note", "f.data"])
def test_a_nul_in_an_answer_is_a_field_error_on_every_database(
    operator_client: Client, start_run, field
) -> None:
    row = free_question(start_run)
    before = written()
    data = {"f.note": "fine", "f.data": "{}", field: "a\x00b" if field == "f.note" else '{"x": "a\\u0000b"}'}
    response = operator_client.post(reverse("answer", args=[row.pk]), data, **HX)
    assert response.status_code == 422
    html = response.content.decode()
    assert "Remove the NUL character" in html or "contains a NUL character (\\u0000) (at x)" in html
    assert unchanged(before)


def test_a_nul_in_a_start_form_is_a_field_error(operator_client: Client) -> None:
    data = {"f.employee": "Ann\x00", "f.amount": "12", "f.category": "travel", "f.description": "x"}
    response = operator_client.post(reverse("workflow-start", args=["expense_approval"]), data, **HX)
    assert response.status_code == 422
    assert "Remove the NUL character" in response.content.decode()
    assert not Session.objects.exists()


def test_nan_in_a_json_field_is_a_field_error(operator_client: Client) -> None:
    data = {"f.title": "t", "f.data": '{"x": NaN}'}
    response = operator_client.post(reverse("workflow-start", args=["freeform"]), data, **HX)
    assert response.status_code == 422
    assert "holds a number JSON cannot (NaN or Infinity) (at x)" in response.content.decode()
    assert not Session.objects.exists()


# -- bulk ids -------------------------------------------------------------------------------------

ARABIC = str.maketrans("0123456789", "٠١٢٣٤٥٦٧٨٩")


@pytest.mark.parametrize(
    "make_id",
    [
        pytest.param(lambda pk: str(pk).translate(ARABIC), id="arabic-indic-digits"),
        pytest.param(lambda pk: "²", id="superscript"),
        pytest.param(lambda pk: str(2**64 + pk), id="past-2^63"),
        pytest.param(lambda pk: str(2**63), id="2^63"),
        pytest.param(lambda pk: f"{pk}\x00", id="nul"),
        pytest.param(lambda pk: f" {pk}", id="space"),
    ],
)
def test_a_bulk_id_that_is_not_an_id_is_400_and_answers_nothing(
    operator_client: Client, start_run, make_id
) -> None:
    row = pending(start_run())[0]
    before = written()
    ids = [str(row.pk), make_id(row.pk)]
    response = operator_client.post(reverse("bulk-answer"), {"decision": "approve", "ids": ids}, **HX)
    assert response.status_code == 400
    text = response.content.decode()
    assert "is not an interrupt id: ids are whole numbers from 1 to 9223372036854775807" in text
    assert unchanged(before)


# -- a workflow no longer registered ------------------------------------------------------------


def test_an_answer_to_a_workflow_no_longer_registered_is_410_naming_it(
    operator_client: Client, start_run, settings
) -> None:
    rows = pending(start_run())
    before = written()
    settings.WFAPP_WORKFLOWS = [p for p in settings.WFAPP_WORKFLOWS if "expense_approval" not in p]
    response = operator_client.post(reverse("answer", args=[rows[0].pk]), {"f.approved": "true"}, **HX)
    assert response.status_code == 410
    assert "The workflow &#x27;expense_approval&#x27; of this question is no longer registered" in (
        response.content.decode()
    )
    bulk = operator_client.post(reverse("bulk-answer"), {"decision": "approve", "ids": [rows[1].pk]}, **HX)
    assert bulk.status_code == 409 and "no longer registered" in bulk.content.decode()
    assert unchanged(before)


# -- GET filters --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "query",
    [
        {"after": base64.urlsafe_b64encode(("[" * 20_000 + "]" * 20_000).encode()).decode()},
        {"after": base64.urlsafe_b64encode(b'["\\u0000", 1]').decode()},
        {"q": "a\x00b", "workflow": "x\x00"},
    ],
)
def test_inbox_and_runs_filters_never_fail(operator_client: Client, start_run, query) -> None:
    start_run()
    assert operator_client.get(reverse("inbox"), query).status_code == 200
    assert operator_client.get(reverse("runs"), query).status_code == 200


def test_a_run_address_with_a_nul_is_404(operator_client: Client) -> None:
    assert operator_client.get("/runs/a%00b/").status_code == 404
    assert operator_client.get("/runs/a%00b/events/").status_code == 404


# -- properties: whatever is posted, a clear answer, and a refusal writes nothing ---------------------

TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=30)
JSONISH = st.one_of(
    TEXT,
    st.integers(1, 400).map(lambda n: "[" * n + "]" * n),
    st.integers(1, 200).map(lambda n: '{"a":' * n + "1" + "}" * n),
    st.sampled_from(["{}", '{"x": NaN}', '"\\u0000"', '"\\ud800"', "[1, 2]", "null", "1e999"]),
)
ANSWER_FIELDS = st.dictionaries(
    st.sampled_from(["f.note", "f.data", "f.approved", "f.comment", "_rows", "zzz", ""]), JSONISH, max_size=5
)
LOOSE = [HealthCheck.function_scoped_fixture, HealthCheck.too_slow]


@settings(max_examples=40, deadline=None, suppress_health_check=LOOSE)
@given(fields=ANSWER_FIELDS, freeform=st.booleans())
@example(fields={"f.note": "x", "f.data": "[" * 20_000 + "]" * 20_000}, freeform=True)
@example(fields={"f.approved": "true", "f.comment": "\x00"}, freeform=False)
def test_any_answer_post_is_answered_clearly(operator_client: Client, start_run, fields, freeform) -> None:
    row = free_question(start_run) if freeform else pending(start_run())[0]
    before = written()
    response = operator_client.post(reverse("answer", args=[row.pk]), fields, **HX)
    assert response.status_code in (200, 302, *REFUSED)
    if Interrupt.objects.get(pk=row.pk).status == InterruptStatus.PENDING:
        assert unchanged(before)
    else:
        assert response.status_code in (200, 302)
        assert AnswerAttempt.objects.filter(pk__gt=before[1], outcome="accepted").count() == 1


@settings(max_examples=40, deadline=None, suppress_health_check=LOOSE)
@given(title=TEXT, data=JSONISH)
@example(title="t", data="[" * 20_000 + "]" * 20_000)
@example(title="t\x00", data="{}")
def test_any_start_form_is_answered_clearly(operator_client: Client, title: str, data: str) -> None:
    runs = Session.objects.count()
    url = reverse("workflow-start", args=["freeform"])
    response = operator_client.post(url, {"f.title": title, "f.data": data}, **HX)
    assert response.status_code in (200, *REFUSED)
    if response.status_code != 200 or "HX-Redirect" not in response:
        assert Session.objects.count() == runs


@settings(max_examples=40, deadline=None, suppress_health_check=LOOSE)
@given(ids=st.lists(TEXT | st.integers(-(2**70), 2**70).map(str), max_size=4))
@example(ids=["١٢"])
@example(ids=[str(2**63)])
def test_any_bulk_ids_are_answered_clearly(operator_client: Client, start_run, ids: list[str]) -> None:
    start_run()
    before = written()
    response = operator_client.post(reverse("bulk-answer"), {"decision": "approve", "ids": ids}, **HX)
    assert response.status_code in (200, *REFUSED)
    if response.status_code != 200:
        assert unchanged(before)
