"""Issue 25, item 8: ``state_schema`` on workflows and nodes."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest
from pydantic import BaseModel

from engine import START, BaseNode, Context, Event, Runner, Workflow, node


class Counters(BaseModel):
    count: int = 0
    label: str = ""


class Other(BaseModel):
    note: str = ""


async def test_state_writes_follow_the_workflows_schema(read_log: Any) -> None:
    refused: list[str] = []

    @node
    def write(ctx: Context, node_input: Any) -> str:
        ctx.state["count"] = 2
        ctx.state["app:theme"] = "dark"  # prefixed keys are not checked
        ctx.state["user:seen"] = True
        for key, value in (("count", "two"), ("unknown", 1)):
            try:
                ctx.state[key] = value
            except ValueError:
                refused.append(key)
        return "ok"

    runner = Runner(Workflow(name="wf", edges=[(START, write)], state_schema=Counters))
    result = await runner.run(None)
    assert refused == ["count", "unknown"]
    assert result.status == "completed", result.error
    assert (await read_log(runner, result.session_id)).state() == {
        "count": 2,
        "app:theme": "dark",
        "user:seen": True,
    }


async def test_a_yielded_state_delta_is_checked_and_fails_the_node() -> None:
    class Writes(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            yield Event(state={"label": 5})

    result = await Runner(Workflow(name="wf", edges=[(START, Writes(name="w"))], state_schema=Counters)).run(
        None
    )
    assert result.status == "failed"
    assert "label" in (result.error or "") and result.error_type == "StateSchemaError"


async def test_a_nodes_schema_overrides_its_workflows() -> None:
    @node
    def count(ctx: Context, node_input: Any) -> int:
        ctx.state["count"] = 1
        return 1

    class Notes(BaseNode):
        async def _run_impl(self, *, ctx: Context, node_input: Any) -> AsyncGenerator[Any, None]:
            ctx.state["note"] = "fine"
            yield "noted"

    wf = Workflow(
        name="wf", edges=[(START, count, Notes(name="notes", state_schema=Other))], state_schema=Counters
    )
    result = await Runner(wf).run(None)
    assert (result.status, result.output) == ("completed", "noted")


async def test_children_inherit_the_schema() -> None:
    @node
    def child(ctx: Context, node_input: Any) -> None:
        ctx.state["undeclared"] = 1

    @node(rerun_on_resume=True)
    async def parent(ctx: Context, node_input: Any) -> str:
        try:
            await ctx.run_node(child)
        except ValueError:
            return "refused"
        return "accepted"

    result = await Runner(Workflow(name="wf", edges=[(START, parent)], state_schema=Counters)).run(None)
    assert result.output == "refused"


def test_parameters_read_from_state_must_be_declared_when_the_workflow_is_built() -> None:
    @node
    def uses(node_input: Any, count: int, missing: str = "") -> int:
        return count

    with pytest.raises(ValueError, match="missing"):
        Workflow(name="wf", edges=[(START, uses)], state_schema=Counters)

    @node
    def fine(node_input: Any, count: int, label: str = "") -> int:
        return count

    Workflow(name="wf", edges=[(START, fine)], state_schema=Counters)
