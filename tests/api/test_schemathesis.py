"""Property-based: schemathesis against the served OpenAPI document (``manage.py serve``).

No request may get a 5xx, and every response must match the document: status codes, content
types, headers and bodies. The two SSE streams never end by themselves, so they are left to
``test_streams.py``. The number of examples is bounded so the run stays short.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.specs.openapi.checks import positive_data_acceptance

from engine import limits
from engine.errors import ValueLimitError
from tests.web.test_browser import Server, serving


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, str]]:
    with serving(tmp_path_factory.mktemp("schemathesis")) as live:
        token = live.manage("wf", "token", "create", "olga", "--name", "schemathesis").strip()
        live.start_run(
            "expense_approval", {"employee": "Ann", "amount": 500, "category": "meals", "description": "x"}
        )
        yield live, token


@pytest.fixture(scope="module")
def api_schema(served: tuple[Server, str]) -> Any:
    live, token = served
    schema = schemathesis.openapi.from_url(
        f"{live.url}/api/v1/openapi.json", headers={"Authorization": f"Bearer {token}"}
    )
    return schema.exclude(path_regex=r"/stream$")


# An answer's schema is each question's own and the generic start takes any workflow's input:
# the document cannot say which values those accept, nor which cursors (opaque: only those the
# API gave out work), so there "valid per the document" does not mean "accepted". The
# per-workflow starts and the first pages of the lists are held to it.
DYNAMIC = ("/api/v1/interrupts/{question_id}/answer", "/api/v1/workflows/{name}/runs")


def _storable(body: Any) -> bool:
    """Whether the log could keep ``body`` (JSON Schema cannot say "no NUL, not too deep")."""
    try:
        limits.check_input(body, "The body")
    except ValueLimitError:
        return False
    return True


def _checker(operation: Any, base_url: str, token: str) -> Any:
    """A hypothesis test of one operation: generated requests, every schemathesis check."""

    @given(case=operation.as_strategy())
    @settings(
        max_examples=12,
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    def check(case: Any) -> None:
        if case.headers and "Idempotency-Key" in case.headers:
            # The contract: one key per distinct request (reusing one for another body is
            # refused, 422). Generated keys repeat across examples, so keep them unique.
            case.headers["Idempotency-Key"] = uuid.uuid4().hex
        opaque = operation.path in DYNAMIC or "after" in (case.query or {}) or not _storable(case.body)
        case.call_and_validate(
            base_url=base_url,
            headers={"Authorization": f"Bearer {token}"},
            excluded_checks=[positive_data_acceptance] if opaque else [],
        )

    return check


# schemathesis's own pytest integration (``from_fixture``) does not work with pytest 9, so each
# operation's strategy is driven by hypothesis directly; a failure names its operation.
def test_the_served_api_matches_its_schema(api_schema: Any, served: tuple[Server, str]) -> None:
    live, token = served
    failures = []
    operations = [result.ok() for result in api_schema.get_all_operations()]
    assert len(operations) >= 15
    for operation in operations:
        try:
            _checker(operation, live.url, token)()
        except (Exception, BaseExceptionGroup) as failure:  # schemathesis groups its failures
            failures.append(f"{operation.label}: {failure}")
    assert not failures, "\n\n".join(failures)


def test_the_server_logged_no_error(served: tuple[Server, str]) -> None:
    live, _ = served
    log = Path(live.log.name).read_text()
    assert " ERROR " not in log and "Traceback" not in log, log[-3000:]
