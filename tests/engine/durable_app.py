"""A workflow that counts executions, runnable as a script to resume a saved log.

``python durable_app.py <log.json> <answers.json>`` loads the log into a fresh store,
resumes the run with the answers and prints the result and execution counts as JSON.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from engine import START, InMemoryEventStore, JoinNode, RequestInput, Runner, Workflow, node

CALLS: dict[str, int] = {}


def _count(name: str) -> None:
    CALLS[name] = CALLS.get(name, 0) + 1


def fetch(node_input: dict[str, Any]) -> dict[str, Any]:
    _count("fetch")
    return {"order": node_input["order"], "total": node_input["qty"] * 5}


def audit(node_input: dict[str, Any]) -> str:
    _count("audit")
    return f"audited {node_input['order']}"


@node(rerun_on_resume=False)
async def approve(node_input: dict[str, Any]):
    _count("approve")
    yield RequestInput(
        interrupt_id="approve", message=f"Approve {node_input['total']}?", response_schema={"type": "boolean"}
    )


def decide(node_input: dict[str, Any]) -> dict[str, Any]:
    _count("decide")
    return {"approved": node_input["approve"], "audit": node_input["audit"]}


@node(rerun_on_resume=True)
async def review_lines(ctx: Any, node_input: dict[str, Any]):
    _count("review_lines")
    checked = await asyncio.gather(*(ctx.run_node(check_line, n) for n in range(3)))
    answer = await ctx.run_node(ask_line, checked)
    yield {"checked": checked, "answer": answer}


def check_line(node_input: int) -> int:
    _count(f"check_line{node_input}")
    return node_input * 2


@node(rerun_on_resume=False)
async def ask_line(node_input: list[int]):
    _count("ask_line")
    yield RequestInput(interrupt_id="lines", message=f"Lines {node_input} ok?")


join = JoinNode(name="join")
graph_workflow = Workflow(name="orders", edges=[(START, fetch, (approve, audit), join, decide)])
dynamic_workflow = Workflow(name="lines", edges=[(START, review_lines)])
WORKFLOWS = {wf.name: wf for wf in (graph_workflow, dynamic_workflow)}


async def _resume(log: dict[str, Any], answers: dict[str, Any]) -> dict[str, Any]:
    store = InMemoryEventStore.load(log)
    runner = Runner(WORKFLOWS[log["workflow"]], store=store)
    result = await runner.resume(log["session_id"], answers, actor="subprocess")
    return {"status": result.status, "output": result.output, "calls": CALLS}


if __name__ == "__main__":
    saved = json.loads(open(sys.argv[1]).read())
    given = json.loads(open(sys.argv[2]).read())
    print(json.dumps(asyncio.run(_resume(saved, given))))
