"""Versions on the dashboard: the run page, the runs list, and the workflow page's open runs
per version with each open run's replay check."""

from __future__ import annotations

import json
import re
from io import StringIO
from typing import Any

from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from tests.wfapp.helpers import deploy


def start(settings: Any, *deployed: str) -> str:
    deploy(settings, *deployed)
    out = StringIO()
    call_command("wf", "start", "versioned", "--input", '"x"', stdout=out)
    return str(json.loads(out.getvalue())["run"])


def page(client: Client, name: str, *args: str) -> str:
    response = client.get(reverse(name, args=list(args)))
    assert response.status_code == 200
    return response.content.decode()


def test_the_run_page_and_the_runs_list_show_the_version_and_when_it_is_not_deployed(
    settings: Any, transactional_db: None, operator_client: Client
) -> None:
    old = start(settings, "v1")
    new = start(settings, "v1", "v2")

    html = page(operator_client, "run", old)
    assert re.search(r'version <span class="mono" id="run-version">1</span>', html)
    assert "not deployed" not in html
    listed = page(operator_client, "runs")
    assert '<th scope="col">Version</th>' in listed
    for run, version in ((old, "1"), (new, "2")):
        row = listed[listed.index(f'id="run-row-{run}"') :].split("</tr>")[0]
        assert f'<span class="mono">{version}</span>' in row and "not deployed" not in row

    deploy(settings, "v2")
    html = page(operator_client, "run", old)
    assert '<span class="status failed" id="run-version-missing">version 1 not deployed</span>' in html
    listed = page(operator_client, "runs")
    row = listed[listed.index(f'id="run-row-{old}"') :].split("</tr>")[0]
    assert "version 1 not deployed" in row
    assert "not deployed" not in page(operator_client, "run", new)


def test_the_workflow_page_counts_open_runs_per_version_and_checks_each(
    settings: Any, transactional_db: None, operator_client: Client
) -> None:
    old = start(settings, "v1")
    new = start(settings, "v1", "v2")

    html = page(operator_client, "workflow", "versioned")
    assert 'New runs start on version <span class="mono" id="workflow-version">2</span>' in html
    versions = html[html.index('id="workflow-versions"') :].split("</table>")[0]
    assert re.findall(r'<td class="mono">(\w+)</td><td>(\d+)</td>', versions) == [("2", "1"), ("1", "1")]
    assert "newest: new runs start here" in versions
    checks = html[html.index('id="workflow-checks"') :].split("</table>")[0]
    for run in (old, new):
        row = checks[checks.index(f'id="check-{run}"') :].split("</tr>")[0]
        assert '<span class="status completed">replays</span>' in row

    deploy(settings, "v2", "v1_reordered")  # version 1 registered again, but its graph changed
    html = page(operator_client, "workflow", "versioned")
    checks = html[html.index('id="workflow-checks"') :].split("</table>")[0]
    row = checks[checks.index(f'id="check-{old}"') :].split("</tr>")[0]
    assert '<span class="status failed">diverges</span>' in row and "versioned@1/prepare@1" in row

    deploy(settings, "v2")
    html = page(operator_client, "workflow", "versioned")
    versions = html[html.index('id="workflow-versions"') :].split("</table>")[0]
    assert re.search(
        r'<td class="mono">1</td><td>1</td><td><span class="status failed">not deployed</span>', versions
    )
    checks = html[html.index('id="workflow-checks"') :].split("</table>")[0]
    assert "version 1 not deployed" in checks[checks.index(f'id="check-{old}"') :].split("</tr>")[0]


def test_a_run_that_failed_to_replay_shows_the_path_on_its_page(
    settings: Any, transactional_db: None, operator_client: Client
) -> None:
    run = start(settings, "v1")
    deploy(settings, "v1_reordered")

    out = StringIO()
    call_command("wf", "answer", run, "ok", "--answer", '"yes"', "--user", "olga", stdout=out)
    assert json.loads(out.getvalue())["status"] == "failed"

    html = page(operator_client, "run", run)
    error = html[html.index('<p class="notice error" id="run-error">') :].split("</p>")[0]
    assert "<strong>ReplayDivergenceError</strong>" in error
    assert "no longer replays on this code, so nothing ran" in error
    assert "versioned@1/prepare@1" in error and "now comes after &#x27;ask&#x27;" in error
