"""``Context.step``: work recorded by one ``completed`` event, replayed without running again."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from engine import START, BaseNode, Context, InMemoryEventStore, RequestInput, Runner, Workflow, node


class Ask(BaseNode):
    async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
        yield RequestInput(message="ok?")


def flow(done: list[str], fail: bool = False) -> Workflow:
    async def asks(ctx: Context, node_input: str) -> Any:
        async def fetch() -> dict[str, Any]:
            done.append(node_input)
            if fail:
                raise ValueError("the service is down")
            return {"fetched": node_input}

        fetched = await ctx.step("fetch", fetch)
        answer = await ctx.run_node(Ask(name="ask"))
        return [fetched, answer]

    return Workflow(name="wf", edges=[(START, node(asks, rerun_on_resume=True))])


async def test_a_step_is_one_completed_event_and_replays_without_running(read_log: Any) -> None:
    store, done = InMemoryEventStore(), []
    runner = Runner(flow(done), store=store)
    waiting = await runner.run("a")
    assert waiting.status == "waiting", waiting.error
    log = await read_log(runner, waiting.session_id)
    assert [(e.kind, e.output) for e in log.events if e.node_path == "wf@1/asks@1/fetch@1"] == [
        ("completed", {"fetched": "a"})
    ]

    result = await runner.resume(waiting.session_id, {waiting.interrupts[0].id: "yes"})

    assert result.output == [{"fetched": "a"}, "yes"]
    assert done == ["a"]  # the recorded step came back; its work did not run again


async def test_a_failing_step_is_recorded_at_its_path(read_log: Any) -> None:
    runner = Runner(flow([], fail=True), store=InMemoryEventStore())
    result = await runner.run("a")

    assert result.status == "failed"
    log = await read_log(runner, result.session_id)
    [error] = log.errors()
    assert (error.node_path, error.error.message) == ("wf@1/asks@1/fetch@1", "the service is down")
