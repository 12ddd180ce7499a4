"""The floor: plain asyncio doing the workload's number of awaited calls, no engine at all.

Each call creates a task that appends one small dict to a list. Sequential workloads await
each task in turn; fan-out workloads gather them. The result is faked from the call count:
the floor only tells how far an engine is from the cost of asyncio itself.
"""

from __future__ import annotations

import asyncio

from bench.common import Clock, Sample, expected, floor_calls

NAME = "floor"
PACKAGES: tuple[str, ...] = ()
STORES = ("memory",)


async def _call(log: list[dict[str, int]], i: int) -> int:
    log.append({"i": i})
    return i


async def run(workload: str, size: dict[str, int], store: str, workdir: str, tag: str) -> Sample:
    calls, parallel = floor_calls(workload, size)
    log: list[dict[str, int]] = []
    clock = Clock()
    if parallel:
        await asyncio.gather(*(asyncio.create_task(_call(log, i)) for i in range(calls)))
    else:
        for i in range(calls):
            await asyncio.create_task(_call(log, i))
    wall, cpu = clock.total(), clock.cpu_total()
    assert len(log) == calls
    return Sample(
        wall=wall, cpu=cpu, output=expected(workload, size), records=len(log), extra={"calls": calls}
    )
