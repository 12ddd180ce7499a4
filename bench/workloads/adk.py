"""W1-W6s on google-adk 2.13 (``google.adk.workflow``), driven through ``Runner(node=...)``.

Stores: ``memory`` (InMemorySessionService) and ``sqlite`` (DatabaseSessionService on a fresh
SQLite file per run, aiosqlite, ADK's default pragmas). Building the workflow and creating the
store (tables included) happen before the clock starts; the clock covers creating the session
and every turn until the result.

W6 gathers its 50 children with ``asyncio.gather`` in memory. On SQLite that fails in ADK
2.13 (the first interrupt escapes ``gather`` while siblings still run), so there W6 waits on
the child tasks with ``asyncio.wait`` instead, as ADK's own advice says; RESULTS.md notes it.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections import Counter
from typing import Any

from google.adk import Event, Workflow
from google.adk.events import RequestInput
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService, InMemorySessionService
from google.adk.workflow import START, FunctionNode, JoinNode
from google.genai import types

from bench.common import Clock, Sample

NAME = "adk"
PACKAGES = ("google-adk", "google-genai", "sqlalchemy", "aiosqlite")
STORES = ("memory", "sqlite")
APP = "bench"
USER = "u"

# How often each asking child ran, by its input (W6/W6s); reset per run.
ASKED: Counter[int] = Counter()


def inc(node_input: int) -> int:
    return node_input + 1


def ask(node_input: int):
    ASKED[node_input] += 1
    yield RequestInput(message=f"answer {node_input}", payload={"i": node_input})


INC = FunctionNode(func=inc, name="inc")
ASK = FunctionNode(func=ask, name="ask")


@functools.cache
def build(workload: str, n: int, k: int, variant: str) -> Workflow:
    if workload == "W1":
        nodes = [FunctionNode(func=inc, name=f"n{i}") for i in range(1, n + 1)]
        return Workflow(name="w1", edges=[(START, *nodes)])
    if workload == "W2":

        def const(i: int):
            def f(node_input: Any) -> int:
                return i

            return FunctionNode(func=f, name=f"p{i}")

        def total(node_input: dict) -> int:
            return sum(node_input.values())

        fan = tuple(const(i) for i in range(n))
        return Workflow(
            name="w2", edges=[(START, fan, JoinNode(name="join"), FunctionNode(func=total, name="total"))]
        )
    if workload == "W3":

        async def orch(ctx, node_input: int) -> int:
            x = node_input
            for _ in range(n):
                x = await ctx.run_node(INC, x)
            return x

        return Workflow(
            name="w3", edges=[(START, FunctionNode(func=orch, name="orch", rerun_on_resume=True))]
        )
    if workload == "W4":

        async def orch(ctx, node_input: int) -> int:
            results = await asyncio.gather(*(ctx.run_node(INC, i) for i in range(n)))
            return sum(results)

        return Workflow(
            name="w4", edges=[(START, FunctionNode(func=orch, name="orch", rerun_on_resume=True))]
        )
    if workload == "W5":

        def a(node_input: int) -> int:
            return node_input

        def b(node_input: int) -> Event:
            if node_input < n:
                return Event(output=node_input + 1, route="again")
            return Event(output=node_input, route="done")

        def c(node_input: int) -> int:
            return node_input

        na, nb, nc = (FunctionNode(func=f, name=f.__name__) for f in (a, b, c))
        return Workflow(name="w5", edges=[(START, na, nb), (nb, {"again": na, "done": nc})])
    if workload == "W6":
        if variant == "wait":

            async def orch(ctx, node_input: int) -> list[int]:
                tasks = [asyncio.ensure_future(ctx.run_node(ASK, i)) for i in range(n)]
                await asyncio.wait(tasks)
                return [t.result() for t in tasks]
        else:

            async def orch(ctx, node_input: int) -> list[int]:
                return list(await asyncio.gather(*(ctx.run_node(ASK, i) for i in range(n))))

        return Workflow(
            name="w6", edges=[(START, FunctionNode(func=orch, name="orch", rerun_on_resume=True))]
        )
    if workload == "W6s":

        async def orch(ctx, node_input: int) -> int:
            total = 0
            for i in range(n):
                for j in range(k):
                    total += await ctx.run_node(INC, j)
                total += await ctx.run_node(ASK, i)
            return total

        return Workflow(
            name="w6s", edges=[(START, FunctionNode(func=orch, name="orch", rerun_on_resume=True))]
        )
    raise ValueError(workload)


async def make_store(kind: str, workdir: str, tag: str) -> Any:
    if kind == "memory":
        return InMemorySessionService()
    path = os.path.join(workdir, f"adk-{tag}.db")
    ss = DatabaseSessionService(db_url=f"sqlite+aiosqlite:///{path}")
    # Create the tables now, outside the clock.
    s = await ss.create_session(app_name=APP, user_id="setup")
    await ss.delete_session(app_name=APP, user_id="setup", session_id=s.id)
    return ss


async def close_store(ss: Any) -> None:
    close = getattr(ss, "close", None)
    if close is not None:
        await close()


async def _turn(
    runner: Runner, sid: str, message: types.Content, root: str
) -> tuple[Any, list[tuple[str, Any]]]:
    """Run one turn; return the workflow output (if any) and the interrupts it raised."""
    output: Any = None
    asked: list[tuple[str, Any]] = []
    async for ev in runner.run_async(user_id=USER, session_id=sid, new_message=message):
        info = ev.node_info
        if info is not None and info.output_for and root in info.output_for:
            output = ev.output
        if ev.long_running_tool_ids and ev.content and ev.content.parts:
            for part in ev.content.parts:
                fc = part.function_call
                if fc is not None and fc.id in ev.long_running_tool_ids:
                    asked.append((fc.id, (fc.args or {}).get("payload")))
    return output, asked


def _answer(interrupt_id: str, value: Any) -> types.Content:
    response = types.FunctionResponse(id=interrupt_id, name="adk_request_input", response={"result": value})
    return types.Content(role="user", parts=[types.Part(function_response=response)])


async def run(workload: str, size: dict[str, int], store: str, workdir: str, tag: str) -> Sample:
    n, k = size["n"], size.get("k", 0)
    variant = "wait" if (workload == "W6" and store == "sqlite") else "gather"
    wf = build(workload, n, k, variant)
    root = f"{wf.name}@1"
    ss = await make_store(store, workdir, tag)
    runner = Runner(node=wf, app_name=APP, session_service=ss)
    ASKED.clear()
    start = types.Content(role="user", parts=[types.Part(text="0")])
    try:
        clock = Clock()
        session = await ss.create_session(app_name=APP, user_id=USER)
        output, asked = await _turn(runner, session.id, start, root)
        sample = Sample(wall=0.0)
        if workload in ("W6", "W6s"):
            sample.first_run = clock.lap()
            sample.pending_after_first_run = len(asked)
            pending = list(asked)
            while pending:
                interrupt_id, payload = pending.pop(0)
                output, more = await _turn(runner, session.id, _answer(interrupt_id, payload["i"]), root)
                sample.resumes.append(clock.lap())
                pending.extend(more)
        sample.stop(clock)
        sample.output = output
        final = await ss.get_session(app_name=APP, user_id=USER, session_id=session.id)
        sample.records = len(final.events)
        if workload in ("W6", "W6s"):
            sample.child_executions = sum(ASKED.values())
        if variant == "wait":
            sample.extra["note"] = (
                "asyncio.wait instead of asyncio.gather (gather fails on ADK's SQLite store)"
            )
        return sample
    finally:
        await close_store(ss)
