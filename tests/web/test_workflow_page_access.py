"""The workflow page shows only the open runs its viewer may see, replay checks only to those who
may retry them, and replays a run's log once per log length, not on every visit."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

from django.contrib.auth.models import Permission, User
from django.core.management import call_command

from tests.web.conftest import client_for, pending
from tests.web.test_workflow_access import BIG_EXPENSE, EXPENSE, people
from wfapp.runs import versions

__all__ = ["people"]  # the fixture
PAGE = f"/workflows/{EXPENSE}/"


def _page(user: User) -> str:
    response = client_for(user).get(PAGE)
    assert response.status_code == 200
    return response.content.decode()


def _open_count(html: str) -> str:
    versions = html[html.index('id="workflow-versions"') :].split("</table>")[0]
    return versions.split("<td>")[1].split("</td>")[0]


def test_runs_one_may_not_view_are_neither_listed_nor_counted(
    people: dict[str, User], start_run: Any
) -> None:
    run = start_run(EXPENSE, BIG_EXPENSE, people["fin"])
    html = _page(people["olga"])  # an operator everywhere, but not in the expense rules
    assert run not in html and 'id="workflow-checks"' not in html and _open_count(html) == "0"
    assert _open_count(_page(people["fin"])) == "1"


def test_replay_checks_only_for_those_who_may_retry(people: dict[str, User], start_run: Any) -> None:
    run = start_run(EXPENSE, BIG_EXPENSE, people["fin"])
    auditor = people["audrey"]  # may view the runs, may not retry them
    html = _page(auditor)
    assert _open_count(html) == "1" and run not in html and "Replay check" not in html
    auditor.user_permissions.add(Permission.objects.get(codename="retry_run"))
    html = _page(User.objects.get(pk=auditor.pk))
    assert f'id="check-{run}"' in html and '<span class="status completed">replays</span>' in html


def _replays(user: User) -> int:
    """How many run logs showing the workflow page replayed (the kept results' misses)."""
    before = versions.replayed_count()
    _page(user)
    return versions.replayed_count() - before


def test_a_runs_replay_check_is_kept_until_its_log_grows(
    transactional_db: None, operator: User, start_run: Any
) -> None:
    run = start_run()  # no rules for the expense demo here: every operator sees it
    assert _replays(operator) == 1  # its log, replayed once
    assert _replays(operator) == 0  # the same log length: the result kept
    question = pending(run)[0]
    out = StringIO()
    call_command(
        "wf", "answer", run, question.interrupt_id, "--answer", json.dumps({"approved": True}),
        "--user", "olga", stdout=out,
    )  # fmt: skip
    assert json.loads(out.getvalue())["status"] == "waiting"  # the log grew; the run is still open
    assert _replays(operator) == 1
