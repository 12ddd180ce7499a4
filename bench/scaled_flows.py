"""The scaled benchmark's workflow, registered in its worker processes through
``WFAPP_EXTRA_WORKFLOWS``: ``chain20``, twenty no-op function nodes one after another (the
same as ``bench.scaled_dbos.chain``'s steps), each pausing ``pause`` seconds (0: none)."""

from __future__ import annotations

import asyncio
from typing import Any

from engine import START, Workflow, node

NODES = 20


def _step(index: int) -> Any:
    async def step(node_input: dict[str, Any]) -> dict[str, Any]:
        if node_input.get("pause"):
            await asyncio.sleep(float(node_input["pause"]))
        return {**node_input, "value": int(node_input.get("value", 0)) + index}

    step.__name__ = f"step{index}"
    return node(step, name=f"step{index}")


chain20 = Workflow(name="chain20", edges=[(START, *[_step(i) for i in range(NODES)])])
