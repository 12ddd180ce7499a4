"""Agent nodes in machine instructions: what a model step costs bare pydantic-ai, our node and
google-adk's ``LlmAgent``, counted by ``valgrind --tool=callgrind`` (independent of the load).

    .venv/bin/python -m bench.agents_callgrind [--peers-python bench/.peers-venv/bin/python]

Each side runs the ``bench/agents.py`` conversation (10 model steps, a tool call in each but
the last, on a model that answers at once) in a process of its own under callgrind, 3 warm-up
conversations and then ``FEW`` or ``MANY``; the difference between the two processes' totals,
divided by the extra steps, is one step's instructions without the imports and the warm-up.
Takes about ten minutes (callgrind runs Python some 50x slower).
"""

from __future__ import annotations

import argparse
import json
import sys

from bench import callgrind
from bench.callgrind import ROOT

STEPS, FEW, MANY = 10, 2, 12

CONVERSATIONS = """
import asyncio, sys
which, count = sys.argv[1], int(sys.argv[2])
if which == "adk":
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from bench.workloads.agents_adk import APP, build, one_run
    sessions = InMemorySessionService()
    runner = Runner(node=build({steps}), app_name=APP, session_service=sessions)
    def conversation():
        return one_run(runner, sessions)
else:
    from bench.workloads import agents
    conversation = agents.bare({steps}) if which == "bare" else agents.ours({steps})
async def main():
    for _ in range(3 + count):
        await conversation()
asyncio.run(main())
"""


def instructions(python: str, which: str, count: int) -> int:
    return callgrind.instructions(python, CONVERSATIONS.format(steps=STEPS), which, str(count))


def per_step(python: str, which: str) -> float:
    return (instructions(python, which, MANY) - instructions(python, which, FEW)) / ((MANY - FEW) * STEPS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peers-python", default=str(ROOT / "bench/.peers-venv/bin/python"))
    args = parser.parse_args()
    bare, ours = per_step(sys.executable, "bare"), per_step(sys.executable, "ours")
    adk = per_step(args.peers_python, "adk")
    print(json.dumps({
        "instructions_per_step": {"bare": round(bare), "ours": round(ours), "adk": round(adk)},
        "ours_over_bare": round(ours / bare, 3),
        "adk_over_our_overhead": round(adk / (ours - bare), 1),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
