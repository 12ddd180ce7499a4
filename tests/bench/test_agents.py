"""The agent benchmark: a real (tiny) measurement, its targets and its RESULTS.md section."""

from __future__ import annotations

from bench import agents
from bench.agents_report import agents_section
from bench.summary import agent_targets


async def test_a_tiny_measurement_runs_both_sides_and_checks_their_answers() -> None:
    row = await agents.pairs(steps=3, runs=3, store="memory")

    assert row["store"] == "memory" and row["steps"] == 3
    assert row["bare_ms_per_step"] > 0 and row["ours_ms_per_step"] > 0
    assert row["ratio"] > 0 and row["ours_cpu_ms_per_step"] > 0


def test_targets_and_section_read_the_figures() -> None:
    doc = {
        "command": "bench/agents.py",
        "steps": 10,
        "stores": {
            "memory": {
                "bare_ms_per_step": 2.0,
                "ours_ms_per_step": 2.4,
                "overhead_ms_per_step": 0.4,
                "ratio": 1.2,
                "bare_cpu_ms_per_step": 1.9,
                "ours_cpu_ms_per_step": 2.2,
                "load": 1.5,
            },
            "django-sqlite": {"error": "agents on django-sqlite: exited 1"},
        },
        "adk": {"ms_per_step": 8.0, "cpu_ms_per_step": 6.0},
    }
    bare, adk = agent_targets(doc)
    assert (bare["value"], bare["met"]) == (1.2, True)
    assert (adk["value"], adk["met"]) == (20.0, True)
    assert agent_targets(None)[0]["met"] is None  # not measured

    text = "\n".join(agents_section(doc))
    assert "| in memory | 2.00 ms | 2.40 ms | 0.40 ms | 1.20x |" in text
    assert "failed: agents on django-sqlite: exited 1" in text
    assert "our overhead is 0.30 ms per step against google-adk's 6.00 ms (20.0x)" in text
