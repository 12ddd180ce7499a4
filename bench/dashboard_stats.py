"""Percentiles for the dashboard benchmark (samples in seconds, figures in seconds)."""

from __future__ import annotations

import statistics
from typing import Any


def percentile(values: list[float], q: float) -> float | None:
    """The q-th percentile (0-100), interpolated between the closest ranks; None without values."""
    if not values:
        return None
    ordered = sorted(values)
    if len(ordered) == 1:
        return ordered[0]
    rank = (len(ordered) - 1) * q / 100
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def percentiles(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50_s": percentile(values, 50),
        "p95_s": percentile(values, 95),
        "max_s": max(values) if values else None,
        "mean_s": statistics.fmean(values) if values else None,
    }
