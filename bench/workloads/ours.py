"""W1-W6s on our engine, through its public API only (``from engine import ...``).

Stores: ``memory`` (InMemoryEventStore); ``django-sqlite`` (wfapp's DjangoEventStore on a
fresh SQLite file per process, the embedded profile's settings: WAL, ``synchronous=NORMAL``,
IMMEDIATE transactions, doorbells through the in-memory channel layer) and
``django-postgres`` (the same on ``DATABASE_URL``, in a database of its own). Building the
workflow, setting Django up and migrating happen before the clock starts; the clock covers
``runner.run`` and every ``runner.resume`` until the result. The workflows mirror ``adk.py``
node for node.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections import Counter
from typing import Any

from bench.common import Clock, Sample
from engine import (
    START,
    Event,
    FunctionNode,
    InMemoryEventStore,
    JoinNode,
    RequestInput,
    Runner,
    Workflow,
)

NAME = "ours"
PACKAGES = ("wfapp", "pydantic", "jsonschema")
STORES = ("memory", "django-sqlite", "django-postgres")

ASKED: Counter[int] = Counter()


def inc(node_input: int) -> int:
    return node_input + 1


def ask(node_input: int):
    ASKED[node_input] += 1
    yield RequestInput(message=f"answer {node_input}", payload={"i": node_input})


INC = FunctionNode(inc, name="inc")
ASK = FunctionNode(ask, name="ask")


def _orchestrator(fn: Any) -> FunctionNode:
    return FunctionNode(fn, name="orch", rerun_on_resume=True)


@functools.cache
def build(workload: str, n: int, k: int) -> Workflow:
    if workload == "W1":
        nodes = [FunctionNode(inc, name=f"n{i}") for i in range(1, n + 1)]
        return Workflow(name="w1", edges=[(START, *nodes)])
    if workload == "W2":

        def const(i: int) -> FunctionNode:
            def f(node_input: Any) -> int:
                return i

            return FunctionNode(f, name=f"p{i}")

        def total(node_input: dict) -> int:
            return sum(node_input.values())

        fan = tuple(const(i) for i in range(n))
        return Workflow(
            name="w2", edges=[(START, fan, JoinNode(name="join"), FunctionNode(total, name="total"))]
        )
    if workload == "W3":

        async def orch(ctx, node_input: int) -> int:
            x = node_input
            for _ in range(n):
                x = await ctx.run_node(INC, x)
            return x

        return Workflow(name="w3", edges=[(START, _orchestrator(orch))])
    if workload == "W4":

        async def orch(ctx, node_input: int) -> int:
            return sum(await asyncio.gather(*(ctx.run_node(INC, i) for i in range(n))))

        return Workflow(name="w4", edges=[(START, _orchestrator(orch))])
    if workload == "W5":

        def a(node_input: int) -> int:
            return node_input

        def b(node_input: int) -> Event:
            if node_input < n:
                return Event(output=node_input + 1, route="again")
            return Event(output=node_input, route="done")

        def c(node_input: int) -> int:
            return node_input

        na, nb, nc = (FunctionNode(f, name=f.__name__) for f in (a, b, c))
        return Workflow(name="w5", edges=[(START, na, nb), (nb, {"again": na, "done": nc})])
    if workload == "W6":

        async def orch(ctx, node_input: int) -> list[int]:
            return list(await asyncio.gather(*(ctx.run_node(ASK, i) for i in range(n))))

        return Workflow(name="w6", edges=[(START, _orchestrator(orch))])
    if workload == "W6s":

        async def orch(ctx, node_input: int) -> int:
            total = 0
            for i in range(n):
                for j in range(k):
                    total += await ctx.run_node(INC, j)
                total += await ctx.run_node(ASK, i)
            return total

        return Workflow(name="w6s", edges=[(START, _orchestrator(orch))])
    raise ValueError(workload)


async def make_store(kind: str, workdir: str, tag: str) -> Any:
    if kind == "memory":
        return InMemoryEventStore()
    if kind in ("django-sqlite", "django-postgres"):
        await asyncio.to_thread(setup_django, kind)  # Django's setup is synchronous
        from wfapp.store.events import DjangoEventStore

        return DjangoEventStore(own_thread=True)  # as the runtime's workers use it
    raise ValueError(f"unknown store {kind!r} for our engine")


def prepare(store: str) -> None:
    """Before the worker takes its memory baseline: Django set up, so RSS counts the runs only."""
    if store.startswith("django-"):
        setup_django(store)


@functools.cache
def setup_django(kind: str, data_dir: str | None = None) -> None:
    """Configure Django once per process on a fresh database, and create its tables.

    The SQLite file goes to ``data_dir``, or to a temporary folder removed at exit.
    """
    import atexit
    import os
    import shutil
    import tempfile

    if data_dir is None:
        data_dir = tempfile.mkdtemp(prefix="wfbench-django-")
        atexit.register(shutil.rmtree, data_dir, True)
    os.environ["DJANGO_SETTINGS_MODULE"] = "wfapp.settings.embedded"
    os.environ["WFAPP_DATA_DIR"] = data_dir
    os.environ.pop("REDIS_URL", None)
    if kind == "django-sqlite":
        os.environ.pop("DATABASE_URL", None)
    elif not os.environ.get("DATABASE_URL"):
        raise RuntimeError("django-postgres needs DATABASE_URL")
    import django
    from django.conf import settings
    from django.core.management import call_command

    django.setup()
    if kind == "django-postgres":
        # A database of its own, like the test runner's, so the benchmark never touches real runs.
        from django.db import connection

        name = settings.DATABASES["default"]["NAME"]
        bench_name = f"{name}_wfbench_{os.getpid()}"
        with connection._nodb_cursor() as cursor:
            cursor.execute(f'CREATE DATABASE "{bench_name}"')
        connection.close()
        settings.DATABASES["default"]["NAME"] = bench_name
        connection.settings_dict["NAME"] = bench_name
        atexit.register(_drop_database, name, bench_name)
    call_command("migrate", verbosity=0)
    from django.db import connections

    connections.close_all()  # this thread's connection: the database must be droppable


def _drop_database(name: str, bench_name: str) -> None:
    from django.db import connection

    connection.close()
    connection.settings_dict["NAME"] = name
    with connection._nodb_cursor() as cursor:
        cursor.execute(f'DROP DATABASE IF EXISTS "{bench_name}" WITH (FORCE)')  # the pool's too


async def close() -> None:
    """Close the Django store's connections (its threads'), so its database can be dropped."""
    if "wfapp.store.events" in sys.modules:
        from wfapp.store.events import close_connections

        await close_connections()


async def run(workload: str, size: dict[str, int], store: str, workdir: str, tag: str) -> Sample:
    n, k = size["n"], size.get("k", 0)
    wf = build(workload, n, k)
    events = await make_store(store, workdir, tag)
    runner = Runner(wf, store=events)
    ASKED.clear()
    clock = Clock()
    result = await runner.run(0)
    sample = Sample(wall=0.0)
    if workload in ("W6", "W6s"):
        sample.first_run = clock.lap()
        sample.pending_after_first_run = len(result.interrupts)
        while result.status == "waiting" and result.interrupts:
            it = result.interrupts[0]
            result = await runner.resume(result.session_id, {it.id: it.payload["i"]})
            sample.resumes.append(clock.lap())
    sample.stop(clock)
    if result.status != "completed":
        raise RuntimeError(f"{workload}: run ended {result.status}: {result.error_type}: {result.error}")
    sample.output = result.output
    sample.records = len(await events.list_events(result.session_id))
    if workload in ("W6", "W6s"):
        sample.child_executions = sum(ASKED.values())
    return sample
