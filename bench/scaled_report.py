"""RESULTS.md's "Scaled mode" section, from a ``bench.scaled`` result (``results.json``'s
``"scaled"``, merged in with ``bench.merge --scaled``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

ANSWER_TARGET_S = 0.150
NODE_COST_TARGET = 2.0  # ours within 2x DBOS's per-node durable cost
FULL_RUNS = 500


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1e3:,.0f} ms"


Table = Callable[[list[str], list[list[str]]], list[str]]


def _throughput(found: dict[str, Any], table: Table) -> list[str]:
    rows = []
    for workers, pair in found["throughput"].items():
        ours, dbos = pair["ours"], pair["dbos"]
        cost = dbos["nodes_per_s"] / ours["nodes_per_s"]  # (1 / ours) / (1 / dbos)
        verdict = "met" if cost <= NODE_COST_TARGET else "missed"
        rows.append(
            [
                workers,
                f"{ours['runs_per_s']:,.1f}",
                f"{ours['nodes_per_s']:,.0f}",
                f"{dbos['runs_per_s']:,.1f}",
                f"{dbos['nodes_per_s']:,.0f}",
                f"{cost:.1f}x ({verdict})",
                f"{ours['enqueue_seconds']:.1f} / {dbos['enqueue_seconds']:.1f} s",
            ]
        )
    head = [
        "worker processes",
        "ours runs/s",
        "ours nodes/s",
        "DBOS runs/s",
        "DBOS nodes/s",
        f"per-node cost, ours / DBOS (target <= {NODE_COST_TARGET:g}x)",
        "starting them all (ours / DBOS)",
    ]
    return table(head, rows)


def scaled_section(found: dict[str, Any] | None, table: Table) -> list[str]:
    """The section (its tables drawn by ``table``), or nothing when the run measured no scaled
    mode (it needs PostgreSQL)."""
    if not found:
        return []
    sizes = found["sizes"]
    answer = found["answer"]["to_completion"]
    post = found["answer"]["answer_post"]
    recovery = found["recovery"]
    floor = found["floor"]
    reduced = f" (the target's {FULL_RUNS}, reduced for this machine)" if sizes["runs"] < FULL_RUNS else ""
    answer_verdict = "met" if answer["p95_s"] <= ANSWER_TARGET_S else "missed"
    recovery_verdict = "met" if recovery["max_s"] <= recovery["target_s"] else "missed"
    return [
        "## Scaled mode: worker processes on PostgreSQL, beside DBOS Transact",
        "",
        f"`{found['command']}` on {found['generated_at']}, 1-minute load {found.get('load_after', 0):.1f} "
        f"at the end (2 cores; other sessions ran meanwhile), Redis {'on' if found.get('redis') else 'off'}. "
        f"Throughput: {sizes['runs']} runs{reduced} of a {sizes['nodes']}-node chain of no-op nodes started at "
        f"once through the queue (`starting.start_run` one by one, as web processes do; DBOS: its client's "
        f"`enqueue`) and executed by worker processes already up, {sizes['concurrency']} runs at a "
        "time each (ours: `wf worker --concurrency`; DBOS: the queue's `worker_concurrency`, polled "
        "every 50 ms); from the first start to the last completion. Every node's outcome is durable "
        "before the next node starts in both.",
        "",
        *_throughput(found, table),
        "",
        *table(
            ["figure", "p50", "p95", "target", ""],
            [
                [
                    "answer POST to completion through the queue (serve + 1 worker)",
                    _ms(answer["p50_s"]),
                    _ms(answer["p95_s"]),
                    f"p95 < {_ms(ANSWER_TARGET_S)}",
                    f"{answer_verdict}; the POST alone p50 {_ms(post['p50_s'])}, {answer['n']} samples",
                ],
                [
                    "floor: a bare procrastinate no-op job, defer to executed",
                    _ms(floor["p50_s"]),
                    _ms(floor["p95_s"]),
                    "-",
                    f"max {_ms(floor['max_s'])}, {floor['n']} samples",
                ],
                [
                    f"worker killed (SIGKILL): its runs advance again (lease {recovery['lease_s']} s, "
                    f"sweep {recovery['sweep_s']} s)",
                    _ms(recovery["mean_s"]) + " (mean)",
                    _ms(recovery["max_s"]) + " (max)",
                    f"<= {recovery['target_s']} s",
                    f"{recovery_verdict}; {len(recovery['samples_s'])} kills",
                ],
            ],
        ),
        "",
    ]
