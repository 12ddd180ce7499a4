"""``engine.replay_check``: a recorded log against changed code, executing nothing.

Each test records a log on one definition of a workflow, then checks it against another:
every incompatible change is reported at the first event that no longer fits, with why;
compatible changes replay. Nothing runs during a check (the counters stay at zero).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import AsyncGenerator, Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from engine import (
    START,
    Context,
    Event,
    InMemoryEventStore,
    ReplayReport,
    RequestInput,
    Runner,
    Workflow,
    node,
    replay_check,
)

CALLS: Counter[str] = Counter()


class Price(BaseModel):
    sku: str
    cents: int


def counted(name: str, result: Callable[[Any], Any] = lambda x: x) -> Any:
    def body(node_input: Any) -> Any:
        CALLS[name] += 1
        return result(node_input)

    body.__name__ = name
    return node(body, name=name)


def asker(name: str = "ask") -> Any:
    async def ask(node_input: Any) -> AsyncGenerator[Any, None]:
        CALLS[name] += 1
        yield RequestInput(interrupt_id="q", message="ok?")

    return node(ask, name=name, rerun_on_resume=False)


def chain(*nodes: Any, version: str = "1") -> Workflow:
    return Workflow(name="wf", version=version, edges=[(START, *nodes)])


async def record(workflow: Workflow, node_input: Any = 1) -> list[Event]:
    store = InMemoryEventStore()
    result = await Runner(workflow, store=store).run(node_input)
    assert result.status == "waiting", result.error
    CALLS.clear()
    return await store.list_events(result.session_id)


def diverges(report: ReplayReport, path: str, *words: str) -> None:
    assert not report.replays, "expected a divergence"
    assert report.node_path == path, str(report)
    for word in words:
        assert word in report.reason, str(report)
    assert str(report).startswith(f"diverges at {path} (event {report.seq}): ")
    assert CALLS == {}, "the check ran a node"


async def test_the_same_code_replays_and_nothing_runs() -> None:
    wf = chain(counted("prepare"), asker(), counted("finish"))
    events = await record(wf)

    report = replay_check(wf, events)

    assert report.replays and str(report) == "replays"
    assert CALLS == {}


async def test_a_renamed_node_is_named() -> None:
    events = await record(chain(counted("prepare"), asker()))

    report = replay_check(chain(counted("get_ready"), asker()), events)

    diverges(report, "wf@1/prepare@1", "has no node 'prepare' now", "renamed or removed", "get_ready")


async def test_a_reordered_chain_is_named() -> None:
    events = await record(chain(counted("prepare"), asker()))

    report = replay_check(chain(asker(), counted("prepare")), events)

    diverges(report, "wf@1/prepare@1", "now comes after 'ask'", "had not finished", "reordered")


async def test_a_node_added_in_the_middle_is_named() -> None:
    events = await record(chain(counted("prepare"), asker()))

    report = replay_check(chain(counted("prepare"), counted("enrich"), asker()), events)

    diverges(report, "wf@1/ask@1", "now comes after 'enrich'", "the log does not have")


def router(route: str) -> Any:
    def choose(node_input: Any) -> Event:
        CALLS["choose"] += 1
        return Event(output=node_input, route=route)

    return node(choose, name="choose")


async def test_a_changed_route_name_is_named() -> None:
    ask, other = asker(), counted("other")
    old = Workflow(
        name="wf", version="1", edges=[(START, router("manager"), {"manager": ask, "auto": other})]
    )
    events = await record(old)
    renamed = Workflow(
        name="wf",
        version="1",
        edges=[(START, router("manager"), {"single": asker(), "auto": counted("other")})],
    )

    report = replay_check(renamed, events)

    diverges(report, "wf@1/choose@1", "recorded route 'manager' matches no edge", "'single'")


async def test_a_changed_output_type_is_named() -> None:
    events = await record(chain(counted("prepare", lambda x: {"sku": "a"}), asker()))

    def prepare(node_input: Any) -> Price:
        return Price(sku="a", cents=1)

    report = replay_check(chain(node(prepare), asker()), events)

    diverges(report, "wf@1/prepare@1", "no longer fits its output type Price", "cents")


@node
def lookup(node_input: Any) -> int:
    CALLS["lookup"] += 1
    return 7


@node
def audit(node_input: Any) -> int:
    CALLS["audit"] += 1
    return 0


@node(rerun_on_resume=False)
async def approve(node_input: Any) -> AsyncGenerator[Any, None]:
    CALLS["approve"] += 1
    yield RequestInput(interrupt_id="approve", message="approve?")


@node(rerun_on_resume=True)
async def orch_v1(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    found = await ctx.run_node(lookup, node_input)
    return await ctx.run_node(approve, found)


@node(rerun_on_resume=True)
async def orch_v2_added(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    found = await ctx.run_node(lookup, node_input)
    await ctx.run_node(audit, found)
    return await ctx.run_node(approve, found)


@node(rerun_on_resume=True)
async def orch_v2_after(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    found = await ctx.run_node(lookup, node_input)
    answer = await ctx.run_node(approve, found)
    await ctx.run_node(audit, found)
    return answer


@node(rerun_on_resume=True)
async def orch_v2_swapped(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    answer = await ctx.run_node(approve, node_input)
    return await ctx.run_node(lookup, answer)


@node(rerun_on_resume=True)
async def orch_v2_renamed(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    return await ctx.run_node(approve, await ctx.run_node(audit, node_input))


@node(rerun_on_resume=True)
async def orch_v2_maybe(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    found = await ctx.run_node(lookup, node_input)
    if found > 100:  # a new child the code may skip: a log without it still fits
        await ctx.run_node(audit, found)
    return await ctx.run_node(approve, found)


@node(rerun_on_resume=True)
async def orch_v2_helper(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1

    async def ask(found: Any) -> Any:  # defined first, called second: the order is the calls'
        return await ctx.run_node(approve, found)

    return await ask(await ctx.run_node(lookup, node_input))


def dynamic(orch: Any) -> Workflow:
    return Workflow(name="wf", version="1", edges=[(START, node(orch, name="orch"))])


async def test_an_added_dynamic_child_is_named() -> None:
    events = await record(dynamic(orch_v1))

    report = replay_check(dynamic(orch_v2_added), events)

    diverges(
        report, "wf@1/orch@1/approve@1", "now starts 'audit'", "before 'approve'", "the log has no 'audit'"
    )


async def test_a_dynamic_child_added_after_the_waiting_one_replays() -> None:
    events = await record(dynamic(orch_v1))

    assert replay_check(dynamic(orch_v2_after), events).replays
    assert CALLS == {}


async def test_a_conditional_new_child_and_a_helper_that_starts_children_replay() -> None:
    events = await record(dynamic(orch_v1))

    assert replay_check(dynamic(orch_v2_maybe), events).replays
    assert replay_check(dynamic(orch_v2_helper), events).replays
    assert CALLS == {}


async def test_dynamic_children_in_another_order_are_named() -> None:
    events = await record(dynamic(orch_v1))

    report = replay_check(dynamic(orch_v2_swapped), events)

    diverges(report, "wf@1/orch@1/lookup@1", "order approve, lookup", "the log has lookup, approve")


async def test_a_dynamic_child_no_longer_called_is_named() -> None:
    events = await record(dynamic(orch_v1))

    report = replay_check(dynamic(orch_v2_renamed), events)

    diverges(report, "wf@1/orch@1/lookup@1", "no longer starts a child 'lookup'", "audit, approve")


async def test_a_new_node_after_the_waiting_one_replays() -> None:
    events = await record(chain(counted("prepare"), asker()))

    assert replay_check(chain(counted("prepare"), asker(), counted("notify")), events).replays


async def test_a_changed_node_body_replays() -> None:
    events = await record(chain(counted("prepare", lambda x: x + 1), asker()))

    assert replay_check(chain(counted("prepare", lambda x: x * 100), asker()), events).replays


async def test_a_log_of_another_workflow_is_refused() -> None:
    events = await record(chain(counted("prepare"), asker()))
    other = Workflow(name="other", version="1", edges=[(START, counted("prepare"), asker())])

    report = replay_check(other, events)

    assert not report.replays and "not of workflow 'other'" in report.reason


async def test_a_recorded_session_mapping_is_accepted() -> None:
    """The shape ``manage.py wf export`` writes (and ``InMemoryEventStore.dump``), read back from JSON."""
    wf = chain(counted("prepare"), asker())
    store = InMemoryEventStore()
    result = await Runner(wf, store=store).run(1)
    exported = json.loads(json.dumps(store.dump(result.session_id)))

    assert exported["version"] == "1"
    assert replay_check(wf, exported).replays
    assert not replay_check(chain(asker(), counted("prepare")), exported).replays


async def test_the_recorded_orders_log_replays_on_todays_code() -> None:
    from tests.engine.test_dynamic_durability import WORKFLOW

    saved = json.loads((Path(__file__).parent / "recorded" / "dynamic_orders_waiting.json").read_text())

    assert replay_check(WORKFLOW, saved).replays


# -- at resume time -------------------------------------------------------------------------------


async def test_a_resume_on_code_that_no_longer_fits_fails_naming_the_path_and_runs_nothing() -> None:
    store = InMemoryEventStore()
    old = chain(counted("prepare"), asker(), counted("finish"))
    first = await Runner(old, store=store).run(1)
    before = len(await store.list_events(first.session_id))
    CALLS.clear()
    changed = chain(counted("prepare"), counted("enrich"), asker(), counted("finish"))

    failed = await Runner(changed, store=store).resume(first.session_id, {"q": "yes"})

    assert (failed.status, failed.error_type) == ("failed", "ReplayDivergenceError")
    assert "wf@1/ask@1" in (failed.error or "") and "'enrich'" in (failed.error or "")
    assert CALLS == {}
    kinds = [e.kind for e in (await store.list_events(first.session_id))[before:]]
    assert kinds == ["answer", "status"]  # the answer, kept; then the failure; no node ran

    # With the old code back, a retry takes the answer up and finishes.
    done = await Runner(old, store=store).resume(first.session_id, {})
    assert (done.status, done.output) == ("completed", "yes")
    assert CALLS == {"finish": 1}


async def test_a_session_of_another_version_is_refused_with_nothing_written() -> None:
    from engine.errors import SessionVersionError

    store = InMemoryEventStore()
    first = await Runner(chain(counted("prepare"), asker(), version="1"), store=store).run(1)
    before = await store.list_events(first.session_id)

    with pytest.raises(SessionVersionError, match=r"started on version '1'.*has version '2'"):
        await Runner(chain(counted("prepare"), asker(), version="2"), store=store).advance(first.session_id)

    assert await store.list_events(first.session_id) == before
    assert (await store.get_session(first.session_id)).version == "1"


@node(rerun_on_resume=True)
async def orch_computed(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    steps = [lookup, approve]
    result = node_input
    for step in steps:  # the targets are values: the source cannot say which children these are
        result = await ctx.run_node(step, result)
    return result


async def test_children_the_source_cannot_name_are_left_unchecked_and_said_so() -> None:
    events = await record(dynamic(orch_computed))

    report = replay_check(dynamic(orch_v2_renamed), events)  # a changed orchestrator: checked
    assert not report.replays
    report = replay_check(dynamic(orch_computed), events)

    assert report.replays and report.unchecked == ("wf@1/orch@1",)


async def _look_up_then_approve(ctx: Context, node_input: Any) -> Any:
    return await ctx.run_node(approve, await ctx.run_node(lookup, node_input))


@node(rerun_on_resume=True)
async def orch_delegating(ctx: Context, node_input: Any) -> Any:
    CALLS["orch"] += 1
    return await _look_up_then_approve(ctx, node_input)  # its children start in the helper


async def test_a_body_that_hands_its_context_to_a_helper_is_left_unchecked_not_refused() -> None:
    events = await record(dynamic(orch_delegating))

    report = replay_check(dynamic(orch_delegating), events)

    assert report.replays and report.unchecked == ("wf@1/orch@1",)
    assert CALLS == {}
