"""W1-W6s on LangGraph 1.2: StateGraph for W1/W2/W5, the functional API for the rest.

Stores: ``memory`` (InMemorySaver) and ``sqlite`` (AsyncSqliteSaver on a fresh SQLite file per
run, its default settings); LangGraph's default durability. Everything runs through the async
API (``ainvoke``). Graph nodes are plain functions (LangGraph runs them inline); tasks and
entrypoints are coroutines, as the async functional API needs. Building the graph, compiling it
against the run's checkpointer and setting the store up happen before the clock starts.

W2's join is LangGraph's own: one edge from all 100 nodes into the summing node, which waits
for every one of them. W6 resumes with ``Command(resume={interrupt_id: answer})``, one
interrupt per resume, taking each pending interrupt from what the previous call returned
(LangGraph reports one at a time from a gather).
"""

from __future__ import annotations

import asyncio
import functools
import operator
import os
from collections import Counter
from typing import Annotated, Any, TypedDict

import aiosqlite
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.func import entrypoint, task
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command, interrupt

from bench.common import Clock, Sample

NAME = "langgraph"
PACKAGES = ("langgraph", "langgraph-checkpoint", "langgraph-checkpoint-sqlite", "aiosqlite")
STORES = ("memory", "sqlite")

ASKED: Counter[int] = Counter()


class X(TypedDict, total=False):
    x: int
    route: str
    vals: Annotated[dict[str, int], operator.or_]
    out: int


@task
async def inc(x: int) -> int:
    return x + 1


@task
async def ask(i: int) -> Any:
    ASKED[i] += 1
    return interrupt({"i": i, "message": f"answer {i}"})


@functools.cache
def graph_builder(workload: str, n: int) -> StateGraph:
    g = StateGraph(X)
    if workload == "W1":

        def step(s: X) -> X:
            return {"x": s["x"] + 1}

        names = [f"n{i}" for i in range(1, n + 1)]
        for name in names:
            g.add_node(name, step)
        for a, b in zip([START, *names], [*names, END], strict=True):
            g.add_edge(a, b)
        return g
    if workload == "W2":

        def const(i: int):
            def f(s: X) -> X:
                return {"vals": {f"p{i}": i}}

            return f

        def total(s: X) -> X:
            return {"out": sum(s["vals"].values())}

        names = [f"p{i}" for i in range(n)]
        for i, name in enumerate(names):
            g.add_node(name, const(i))
            g.add_edge(START, name)
        g.add_node("total", total)
        g.add_edge(names, "total")
        g.add_edge("total", END)
        return g
    if workload == "W5":

        def a(s: X) -> X:
            return {"x": s["x"]}

        def b(s: X) -> X:
            if s["x"] < n:
                return {"x": s["x"] + 1, "route": "again"}
            return {"route": "done"}

        def c(s: X) -> X:
            return {"out": s["x"]}

        g.add_node("a", a)
        g.add_node("b", b)
        g.add_node("c", c)
        g.add_edge(START, "a")
        g.add_edge("a", "b")
        g.add_conditional_edges("b", lambda s: s["route"], {"again": "a", "done": "c"})
        g.add_edge("c", END)
        return g
    raise ValueError(workload)


def functional(workload: str, n: int, k: int, saver: Any) -> Any:
    if workload == "W3":

        @entrypoint(checkpointer=saver)
        async def w3(x: int) -> int:
            for _ in range(n):
                x = await inc(x)
            return x

        return w3
    if workload == "W4":

        @entrypoint(checkpointer=saver)
        async def w4(x: int) -> int:
            return sum(await asyncio.gather(*(inc(i) for i in range(n))))

        return w4
    if workload == "W6":

        @entrypoint(checkpointer=saver)
        async def w6(x: int) -> list[int]:
            return list(await asyncio.gather(*(ask(i) for i in range(n))))

        return w6
    if workload == "W6s":

        @entrypoint(checkpointer=saver)
        async def w6s(x: int) -> int:
            total = 0
            for i in range(n):
                for j in range(k):
                    total += await inc(j)
                total += await ask(i)
            return total

        return w6s
    raise ValueError(workload)


async def make_store(kind: str, workdir: str, tag: str) -> tuple[Any, Any]:
    if kind == "memory":
        return InMemorySaver(), None
    conn = await aiosqlite.connect(os.path.join(workdir, f"lg-{tag}.db"))
    saver = AsyncSqliteSaver(conn)
    await saver.setup()
    return saver, conn


def _pending(result: Any) -> list[Any]:
    if isinstance(result, dict):
        return list(result.get("__interrupt__", ()))
    return []


async def run(workload: str, size: dict[str, int], store: str, workdir: str, tag: str) -> Sample:
    n, k = size["n"], size.get("k", 0)
    saver, conn = await make_store(store, workdir, tag)
    if workload in ("W1", "W2", "W5"):
        app = graph_builder(workload, n).compile(checkpointer=saver)
    else:
        app = functional(workload, n, k, saver)
    config = {"configurable": {"thread_id": f"t{tag}"}, "recursion_limit": 100_000}
    ASKED.clear()
    try:
        clock = Clock()
        sample = Sample(wall=0.0)
        if workload in ("W1", "W5"):
            sample.output = (await app.ainvoke({"x": 0}, config))["out" if workload == "W5" else "x"]
        elif workload == "W2":
            sample.output = (await app.ainvoke({"vals": {}}, config))["out"]
        else:
            result = await app.ainvoke(0, config)
            if workload in ("W6", "W6s"):
                sample.first_run = clock.lap()
                pending = _pending(result)
                sample.pending_after_first_run = len(pending)
                while pending:
                    it = pending[0]
                    result = await app.ainvoke(Command(resume={it.id: it.value["i"]}), config)
                    sample.resumes.append(clock.lap())
                    pending = _pending(result)
            sample.output = result
        sample.stop(clock)
        checkpoints = [c async for c in saver.alist(config)]
        writes = sum(len(c.pending_writes or ()) for c in checkpoints)
        sample.records = len(checkpoints) + writes
        sample.extra.update(checkpoints=len(checkpoints), writes=writes)
        if workload in ("W6", "W6s"):
            sample.child_executions = sum(ASKED.values())
        return sample
    finally:
        if conn is not None:
            await conn.close()
