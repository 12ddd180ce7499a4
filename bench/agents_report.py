"""RESULTS.md's section on agent nodes (``bench/agents.py``; their targets are in ``summary``)."""

from __future__ import annotations

from typing import Any

STORE_NAMES = {
    "memory": "in memory",
    "django-sqlite": "Django store, SQLite",
    "django-postgres": "Django store, PostgreSQL",
}


def agents_section(agents: dict[str, Any] | None) -> list[str]:
    if not agents:
        return []
    steps = agents.get("steps")
    rows = []
    for store, row in (agents.get("stores") or {}).items():
        name = STORE_NAMES.get(store, store)
        if row.get("error"):
            rows.append(f"| {name} | failed: {row['error']} | | | | |")
            continue
        rows.append(
            f"| {name} | {row['bare_ms_per_step']:.2f} ms | {row['ours_ms_per_step']:.2f} ms | "
            f"{row['overhead_ms_per_step']:.2f} ms | {row['ratio']:.2f}x | "
            f"{row.get('bare_cpu_ms_per_step', 0):.2f} / {row.get('ours_cpu_ms_per_step', 0):.2f} ms |"
        )
    adk = agents.get("adk") or {}
    if adk.get("error"):
        rows.append(f"| google-adk 2.13, in memory | failed: {adk['error']} | | | | |")
    elif adk:
        rows.append(
            f"| google-adk 2.13 `LlmAgent`, in memory | (stub model) | {adk['ms_per_step']:.2f} ms | "
            f"{adk['ms_per_step']:.2f} ms | | {adk.get('cpu_ms_per_step', 0):.2f} ms |"
        )
    memory = (agents.get("stores") or {}).get("memory") or {}
    cpu = ""
    if "ours_cpu_ms_per_step" in memory and adk.get("cpu_ms_per_step"):
        ours_cpu = memory["ours_cpu_ms_per_step"] - memory["bare_cpu_ms_per_step"]
        cpu = (
            f" In CPU time our overhead is {ours_cpu:.2f} ms per step against google-adk's "
            f"{adk['cpu_ms_per_step']:.2f} ms ({adk['cpu_ms_per_step'] / ours_cpu:.1f}x)."
            if ours_cpu > 0
            else ""
        )
    load = f" Machine load (1-minute average) {memory['load']} on 2 cores." if "load" in memory else ""
    return [
        "## Agent nodes",
        "",
        f"`{agents.get('command', 'bench/agents.py')}` on {agents.get('generated_at', '?')}: one agent "
        f"conversation of {steps} model steps, each but the last calling a tool, on a model that answers "
        "at once. Bare pydantic-ai (`Agent.run`) and our `LlmAgent` in a one-node workflow run the same "
        "`FunctionModel` alternately, a pair of runs at a time; overhead is the median over pairs of "
        "(ours - bare) per step, the ratio the median of ours / bare. google-adk's `LlmAgent` runs in a "
        "`Workflow` with a stub `BaseLlm` answering the same script: with a model that costs nothing, "
        "its whole time per step is overhead. CPU is the process's CPU time (threads included), which "
        "a loaded machine inflates less than wall time." + load + cpu,
        "",
        "| store | bare pydantic-ai per step | ours per step | overhead per step | ours / bare | CPU per step (bare / ours) |",
        "|---|---|---|---|---|---|",
        *rows,
        "",
    ]
