"""Versions side by side: new runs start on the newest, each run resumes on its own version.

A run whose version is not registered stays as it is (the runtime and its sweep leave it
alone) and resumes once that version is registered again; a run whose log no longer replays
on its code fails at resume, naming the node path, with nothing executed.
"""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.contrib.auth.models import User

from tests.wfapp.helpers import deploy, jobs_done, settled
from tests.wfapp.versioned import v1, v2
from wfapp.errors import VersionNotDeployedError
from wfapp.models import Event, Session
from wfapp.registry import all_versions, all_workflows, get_workflow, load_versions
from wfapp.runs import answering, interventions, starting
from wfapp.runs.runtime import Runtime
from wfapp.store import lease as leases


def test_the_newest_is_the_last_listed_and_each_version_stays_reachable(settings: Any) -> None:
    deploy(settings, "v1", "v2")

    assert all_workflows()["versioned"] is v2
    assert list(all_versions()["versioned"]) == ["1", "2"]
    assert get_workflow("versioned") is v2
    assert get_workflow("versioned", "1") is v1
    assert get_workflow("versioned", "") is v2  # a run recorded before versions: the newest
    with pytest.raises(
        VersionNotDeployedError, match=r"Version 7 of workflow 'versioned' is not deployed.*1, 2"
    ):
        get_workflow("versioned", "7")


def test_two_entries_with_one_name_and_one_version_are_refused(settings: Any) -> None:
    deploy(settings, "v1", "v1_reordered")

    found, [problem] = load_versions()

    assert found["versioned"] == {"1": v1}
    assert problem.code == "E005" and "same version '1'" in problem.message


async def start(alice: User) -> Session:
    run_id = await starting.start_run("versioned", "x", user=alice)
    return await settled(run_id, "waiting")


async def test_two_versions_side_by_side_each_resume_their_own_runs(
    settings: Any, engine_runtime: Runtime, alice: User
) -> None:
    deploy(settings, "v1")
    old = await start(alice)
    deploy(settings, "v1", "v2")
    new = await start(alice)
    assert (old.version, new.version) == ("1", "2")

    for run in (old, new):
        await answering.answer_interrupt(run.pk, "ok", "yes", user=alice)

    assert (await settled(old.pk, "completed")).output == "v1 finished with yes"
    assert (await settled(new.pk, "completed")).output == "v2 finished with yes"


async def test_a_run_whose_version_is_gone_waits_untouched_until_it_is_back(
    settings: Any, engine_runtime: Runtime, alice: User, caplog: pytest.LogCaptureFixture
) -> None:
    deploy(settings, "v1")
    run = await start(alice)
    deploy(settings, "v2")

    await answering.answer_interrupt(run.pk, "ok", "yes", user=alice, advance=False)  # recorded
    worker = Runtime(sweep=False)  # what a kick does, awaited here
    lease = await sync_to_async(leases.claim)(run.pk, worker.owner, worker.ttl)
    assert lease is not None
    assert await worker.drive(lease) is None
    await engine_runtime.sweep()
    await jobs_done(run.pk)  # workers mode: the job the answer queued found no version 1 either
    await engine_runtime.wait_idle()

    stuck = await Session.objects.aget(pk=run.pk)
    assert (stuck.status, stuck.lease_owner) == ("waiting", None)
    assert stuck.last_seq > stuck.settled_seq  # the answer waits for a worker of version 1
    kinds = [kind async for kind in Event.objects.filter(session_id=run.pk).values_list("kind", flat=True)]
    assert kinds[-1] == "answer" and "completed" not in kinds[kinds.index("answer") :]
    assert run.pk not in await sync_to_async(leases.runs_needing_work)()
    assert not [r for r in caplog.records if r.levelname in ("ERROR", "WARNING")]  # no error spam

    deploy(settings, "v1", "v2")
    assert run.pk in await sync_to_async(leases.runs_needing_work)()
    await engine_runtime.sweep()

    assert (await settled(run.pk, "completed")).output == "v1 finished with yes"


async def test_a_log_that_no_longer_replays_fails_at_resume_naming_the_path(
    settings: Any, engine_runtime: Runtime, alice: User
) -> None:
    deploy(settings, "v1")
    run = await start(alice)
    deploy(settings, "v1_reordered")  # same version, but it asks before it prepares

    await answering.answer_interrupt(run.pk, "ok", "yes", user=alice)
    failed = await settled(run.pk, "failed")

    assert failed.error is not None and failed.error["type"] == "ReplayDivergenceError"
    assert "versioned@1/prepare@1" in failed.error["message"]
    assert "now comes after 'ask'" in failed.error["message"]
    kinds = [kind async for kind in Event.objects.filter(session_id=run.pk).values_list("kind", flat=True)]
    assert kinds[-2:] == ["answer", "status"]  # nothing ran: no node started after the answer

    deploy(settings, "v1")  # the old code back: a retry takes the recorded answer up
    await interventions.retry_run(run.pk, user=alice)
    assert (await settled(run.pk, "completed")).output == "v1 finished with yes"
