"""The Django side of the limits: the store keeps only what it reads back, the CLI refuses the rest.

Run against whichever database is configured (SQLite, or PostgreSQL with ``DATABASE_URL``):
the same values are accepted and refused on both.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from io import StringIO
from typing import Any

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from django.contrib.auth.models import User
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from engine import limits
from engine.errors import ValueLimitError
from tests.wfapp.helpers import last_attempt, log_and_inbox, refusals_since, settled
from tests.wfapp.limit_flows import PATHS, nest
from wfapp.models import Event, RunStatus, Session
from wfapp.runs import answering, starting
from wfapp.runs.inputs import apply_limits
from wfapp.runs.runtime import Runtime
from wfapp.store.events import DjangoEventStore

EXPENSE = {"employee": "ann", "amount": 2500, "category": "equipment", "description": "laptop"}


@pytest.fixture
def limit_flows(settings: Any, workflows: None) -> Iterator[None]:
    settings.WFAPP_WORKFLOWS = [*settings.WFAPP_WORKFLOWS, *PATHS.values()]
    yield


def written() -> tuple[Any, int]:
    """The log and the inbox rows, and where the audit trail stands (a refusal adds to it only)."""
    return log_and_inbox(), last_attempt()


def unchanged(before: tuple[Any, int]) -> bool:
    """Nothing written but, at most, the audit records of refusals (each one storable)."""
    refusals_since(before[1])
    return log_and_inbox() == before[0]


def wf(*args: str) -> Any:
    out = StringIO()
    call_command("wf", *args, stdout=out)
    return json.loads(out.getvalue())


async def run_here(workflow: str, node_input: Any, user: Any = None) -> tuple[str, Any]:
    """Start a run and execute it in this process until it waits or ends; its id and result."""
    engine = Runtime(sweep=False)
    session_id, lease = await starting.create_run(workflow, node_input, user=user, owner=engine.owner)
    assert lease is not None
    await engine.start()
    try:
        return session_id, await engine.drive(lease)
    finally:
        await engine.stop()


async def waiting_expense(alice: User) -> str:
    return (await run_here("expense_approval", EXPENSE, alice))[0]


# -- a log that cannot be read --------------------------------------------------------------------


def write_unreadable_answer(session_id: str, depth: int = 250) -> None:
    """An answer row as a store without the limit wrote it: valid JSON, too deep for the log's parser."""
    session = Session.objects.get(pk=session_id)
    seq = session.last_seq + 1
    Event.objects.create(
        session=session,
        seq=seq,
        kind="answer",
        node_path="approval@1/ask@1",
        author="alice",
        timestamp=0.0,
        data={"answer": {"interrupt_id": "ok", "value": nest(depth), "actor": "alice"}},
    )
    Session.objects.filter(pk=session_id).update(last_seq=seq)


async def test_a_run_whose_log_cannot_be_read_fails_visibly_once(
    engine_runtime: Runtime, alice: User
) -> None:
    session_id = await starting.start_run("approval", {"n": 1}, user=alice)
    await settled(session_id, "waiting")
    await sync_to_async(write_unreadable_answer)(session_id)
    await engine_runtime.sweep()
    run = await settled(session_id, "failed")
    assert run.error is not None and run.error["type"] == "UnreadableLogError"
    assert f"The event log of session {session_id!r} could not be read at event" in run.error["message"]
    assert "recursion limit exceeded" in run.error["message"]
    seq = run.last_seq
    await engine_runtime.sweep()  # a failed run is not taken up again, sweep after sweep
    await engine_runtime.wait_idle()
    assert (await Session.objects.aget(pk=session_id)).last_seq == seq
    with pytest.raises(CommandError, match="could not be read at event"):
        await sync_to_async(wf, thread_sensitive=False)("show", session_id, "--events")


# -- the Django store keeps only what it reads back -------------------------------------------------


async def test_an_answer_nested_too_deep_writes_nothing(alice: User, transactional_db: None) -> None:
    session_id = await waiting_expense(alice)
    before = await sync_to_async(written)()
    with pytest.raises(ValueLimitError, match="The answer is nested 251 levels deep"):
        await answering.answer_interrupt(session_id, "finance-approval", {"comment": nest(250)}, user=alice)
    assert await sync_to_async(unchanged)(before)
    assert await sync_to_async(refusals_since)(before[1]) == ["invalid"]  # audited, without the value


@pytest.mark.parametrize(
    "value",
    [
        pytest.param({"approved": True, "comment": "a\x00b"}, id="nul"),
        pytest.param({"approved": True, "comment": "\udcff"}, id="surrogate"),
    ],
)
async def test_characters_no_database_keeps_are_refused_alike(alice: User, value: Any) -> None:
    session_id = await waiting_expense(alice)
    before = await sync_to_async(written)()
    with pytest.raises(ValueLimitError, match="at comment"):
        await answering.answer_interrupt(session_id, "finance-approval", value, user=alice)
    with pytest.raises(ValueLimitError, match="The workflow input contains"):
        await starting.create_run(
            "expense_approval", {**EXPENSE, "description": value["comment"]}, user=alice
        )
    assert await sync_to_async(unchanged)(before)


async def test_the_deepest_allowed_output_reads_back_from_this_database(
    settings: Any, limit_flows: None, transactional_db: None
) -> None:
    settings.WFAPP_MAX_JSON_DEPTH = limits.READABLE_DEPTH
    # {"deep": [...]}: the dict is one level, so the list may be READABLE_DEPTH - 1 deep.
    session_id, result = await run_here("nesting", {"depth": limits.READABLE_DEPTH - 1})
    assert result is not None and result.status == "completed", (connection.vendor, result)
    run = await Session.objects.aget(pk=session_id)
    assert run.output == {"deep": nest(limits.READABLE_DEPTH - 1)}
    events = await DjangoEventStore().list_events(session_id)
    assert [e.output for e in events if e.output is not None] == [run.output]
    shown = await sync_to_async(wf, thread_sensitive=False)("show", session_id, "--events")
    assert [e["output"] for e in shown["events"] if "output" in e] == [run.output]


async def test_a_node_output_past_the_limit_fails_the_node_and_the_log_stays_readable(
    limit_flows: None, transactional_db: None
) -> None:
    session_id, result = await run_here("nesting", {"depth": 300})
    assert result is not None and result.status == "failed"
    assert "The output of node nesting@1/make@1 is nested 301 levels deep" in (result.error or "")
    assert (await DjangoEventStore().list_events(session_id))[-1].status == "failed"


def test_the_depth_setting_is_the_engines_limit(settings: Any, transactional_db: None) -> None:
    settings.WFAPP_MAX_JSON_DEPTH = 3
    assert limits.current().max_depth == 3
    with pytest.raises(
        ValueLimitError, match=r"nested 4 levels deep \(at extra.0.0\); the limit is 3 levels"
    ):
        async_to_sync(starting.create_run)("expense_approval", {**EXPENSE, "extra": [[[]]]})
    settings.WFAPP_MAX_ANSWER_BYTES = 100
    assert limits.current().max_input_bytes == 100
    with pytest.raises(ImproperlyConfigured, match=r"WFAPP_MAX_JSON_DEPTH.*between 1 and 190"):
        settings.WFAPP_MAX_JSON_DEPTH = limits.READABLE_DEPTH + 1
    apply_limits()  # what the app does at start-up
    assert limits.current().max_depth == 3


# -- the CLI: any argument is a clear error or a result, never a traceback ------------------------------

ARGUMENT = st.text(alphabet=st.characters(codec=None, exclude_categories=()), max_size=40)
JSON_TEXT = st.one_of(
    ARGUMENT,
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
        max_leaves=8,
    ).map(json.dumps),
    st.integers(1, 30_000).map(lambda n: "[" * n + "]" * n),
)
NASTY = ['"\\u0000"', '"\\ud800"', "[" * 20_000 + "]" * 20_000, "1" * 5000, '{"a": NaN}', "\udcff"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=JSON_TEXT)
@example(text=NASTY[0])
@example(text=NASTY[1])
@example(text=NASTY[2])
@example(text=NASTY[5])
@example(text=json.dumps({**EXPENSE, "description": "ok"}))
def test_wf_start_with_any_input_reports_or_refuses_writing_nothing(
    queue_worker: None, alice: User, text: str
) -> None:
    before = written()
    try:
        report = wf("start", "expense_approval", f"--input={text}", "--user", "alice")
    except CommandError as refused:
        assert "Traceback" not in str(refused) and "\x00" not in str(refused)
        assert unchanged(before)
        return
    assert report["status"] in (RunStatus.WAITING, RunStatus.COMPLETED)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=JSON_TEXT)
@example(text=NASTY[0])
@example(text=NASTY[2])
@example(text=NASTY[4])
@example(text=json.dumps({"approved": True, "comment": "\x00"}))
@example(text="-:")  # an option-like value: with "--answer=", it reaches the command, not argparse
def test_wf_answer_with_any_answer_refuses_writing_nothing(
    queue_worker: None, alice: User, text: str
) -> None:
    session_id = async_to_sync(waiting_expense)(alice)
    before = written()
    try:
        report = wf("answer", session_id, "finance-approval", f"--answer={text}", "--user", "alice")
    except CommandError:
        assert unchanged(before)
        assert len(refusals_since(before[1])) == 1  # every refusal on a known question is audited
        return
    assert report["answered"]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=ARGUMENT, interrupt=ARGUMENT, user=ARGUMENT)
@example(run="a\x00b", interrupt="ok", user="alice")
@example(run="\udcff", interrupt="\x00", user="alice")
@example(run=str(2**64), interrupt="x" * 300, user="alice\x00")
def test_wf_with_any_ids_is_a_clear_error(
    queue_worker: None, alice: User, run: str, interrupt: str, user: str
) -> None:
    before = written()
    for args in (
        ("show", run),
        ("show", run, "--events"),
        ("answer", run, interrupt, "--answer", "true", "--user", user),
        ("cancel", run, "--user", user),
        ("retry", run),
        ("start", run, "--input", "null", "--user", user),
    ):
        with pytest.raises(CommandError) as refused:
            wf(*args)
        assert "\x00" not in str(refused.value)
    assert unchanged(before)


async def test_an_answer_to_a_workflow_no_longer_registered_is_refused_naming_it(
    settings: Any, alice: User, bob: User
) -> None:
    session_id = await waiting_expense(alice)  # bob answers: alice, its requester, may not approve it
    before = await sync_to_async(written)()
    settings.WFAPP_WORKFLOWS = [p for p in settings.WFAPP_WORKFLOWS if "expense_approval" not in p]
    with pytest.raises(CommandError, match="belongs to the workflow 'expense_approval', which is no longer"):
        await sync_to_async(wf, thread_sensitive=False)(
            "answer", session_id, "finance-approval", "--answer", '{"approved": true}', "--user", "bob"
        )
    assert await sync_to_async(unchanged)(before)
