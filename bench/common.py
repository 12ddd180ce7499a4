"""Shared by the runner and the workers: sizes, expected results, samples, memory probes.

Standard library only: the workers run both in the project's virtualenv (our engine, the
floor) and in the peers' virtualenv (google-adk, LangGraph), where ``engine`` is not installed.
"""

from __future__ import annotations

import gc
import os
import resource
import time
from dataclasses import asdict, dataclass, field
from typing import Any

WORKLOADS = ("W1", "W2", "W3", "W4", "W5", "W6", "W6s")

TITLES = {
    "W1": "chain",
    "W2": "fanout",
    "W3": "dyn_loop",
    "W4": "dyn_parallel",
    "W5": "route_loop",
    "W6": "hitl",
    "W6s": "hitl_history",
}

# n: the workload's size as BENCHMARKS.md defines it; k: quick children before each
# interrupt (W6s only).
FULL_SIZES: dict[str, dict[str, int]] = {
    "W1": {"n": 200},
    "W2": {"n": 100},
    "W3": {"n": 1000},
    "W4": {"n": 500},
    "W5": {"n": 300},
    "W6": {"n": 50},
    "W6s": {"n": 50, "k": 20},
}
TINY_SIZES: dict[str, dict[str, int]] = {
    "W1": {"n": 20},
    "W2": {"n": 10},
    "W3": {"n": 50},
    "W4": {"n": 50},
    "W5": {"n": 20},
    "W6": {"n": 5},
    "W6s": {"n": 5, "k": 3},
}


def expected(workload: str, size: dict[str, int]) -> Any:
    """The output every engine must produce for ``workload`` at ``size``.

    W1: input 0, n nodes each returning x + 1.  W2: node i returns i, summed after the join.
    W3: x = inc(x) n times from 0.  W4: sum of inc(i) for i < n.  W5: B sends x + 1 back to A
    until x reaches n, then C returns x.  W6: child i is answered with i; the orchestrator
    returns the answers in call order.  W6s: round i runs k quick inc(j) children (j < k)
    and one interrupt answered with i; the orchestrator returns the total.
    """
    n = size["n"]
    if workload in ("W1", "W3", "W5"):
        return n
    if workload == "W2":
        return n * (n - 1) // 2
    if workload == "W4":
        return n * (n + 1) // 2
    if workload == "W6":
        return list(range(n))
    if workload == "W6s":
        k = size["k"]
        return n * (k * (k + 1) // 2) + n * (n - 1) // 2
    raise ValueError(workload)


def units(workload: str, size: dict[str, int]) -> tuple[int, str]:
    """How many units a run of ``workload`` executes, and what a unit is (for µs per unit)."""
    n = size["n"]
    return {
        "W1": (n, "node"),
        "W2": (n + 2, "node"),
        "W3": (n, "child"),
        "W4": (n, "child"),
        "W5": (2 * n + 3, "node run"),
        "W6": (n, "resume"),
        "W6s": (n, "resume"),
    }[workload]


def floor_calls(workload: str, size: dict[str, int]) -> tuple[int, bool]:
    """Awaited calls the floor makes for ``workload``, and whether they run concurrently.

    One call per node execution the workload needs: W6 runs each child once and then one
    child per resume; W6s runs k quick children and one asking child per interrupt.
    """
    n = size["n"]
    return {
        "W1": (n, False),
        "W2": (n + 2, True),
        "W3": (n, False),
        "W4": (n, True),
        "W5": (2 * n + 3, False),
        "W6": (2 * n, True),
        "W6s": (n * (size.get("k", 0) + 1), False),
    }[workload]


class CheckFailed(AssertionError):
    """A workload produced the wrong result; its time does not count."""


@dataclass
class Sample:
    """One timed run of one workload on one engine and store."""

    wall: float  # seconds, the timed part only
    output: Any = None
    records: int | None = None  # events (ours, ADK) or checkpoints (LangGraph) written
    first_run: float | None = None  # W6/W6s: the run up to the first interrupts
    resumes: list[float] = field(default_factory=list)  # W6/W6s: each resume, in order
    pending_after_first_run: int | None = None  # W6: interrupts reported by the first run
    child_executions: int | None = None  # W6/W6s: how often the asking children ran
    gc: float | None = None  # seconds of the wall spent in the garbage collector
    cpu: float | None = None  # CPU seconds of this process over the same span (see Clock)
    resumes_gc: list[float] = field(default_factory=list)  # ... of each resume
    extra: dict[str, Any] = field(default_factory=dict)

    def stop(self, clock: Clock) -> None:
        """Stop the clock: the wall time and the collector's share of it."""
        self.wall = clock.total()
        self.cpu = clock.cpu_total()
        self.gc = clock.gc_total()
        if self.resumes:
            self.resumes_gc = clock.gc_laps[1 : 1 + len(self.resumes)]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def check(workload: str, size: dict[str, int], sample: Sample) -> None:
    want = expected(workload, size)
    if sample.output != want:
        got = repr(sample.output)
        raise CheckFailed(f"{workload}: expected {want!r}, got {got[:300]}")


class GcMeter:
    """Seconds spent in the cyclic garbage collector, all generations, since ``install``.

    A full collection walks every tracked object in the process and lands wherever the
    allocation count says, so it shows up as a spike in one resume; measuring it lets the
    report tell engine work from collector work.
    """

    seconds = 0.0
    _began = 0.0

    @classmethod
    def install(cls) -> None:
        if cls._callback not in gc.callbacks:
            gc.callbacks.append(cls._callback)

    @classmethod
    def _callback(cls, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            cls._began = time.perf_counter()
        else:
            cls.seconds += time.perf_counter() - cls._began


class Clock:
    """perf_counter laps: ``lap()`` returns the seconds since the previous lap.

    It also keeps the collector's share of the whole and of each lap (see ``GcMeter``), and
    the process's CPU time: on a shared machine the wall also counts the time spent waiting for
    a core, which other work decides; an in-memory workload's CPU time is its own.
    """

    def __init__(self) -> None:
        GcMeter.install()
        self.gc_start = self.gc_last = GcMeter.seconds
        self.gc_laps: list[float] = []
        self.cpu_start = time.process_time()
        self.start = self.last = time.perf_counter()

    def lap(self) -> float:
        now = time.perf_counter()
        elapsed, self.last = now - self.last, now
        self.gc_laps.append(GcMeter.seconds - self.gc_last)
        self.gc_last = GcMeter.seconds
        return elapsed

    def total(self) -> float:
        return time.perf_counter() - self.start

    def cpu_total(self) -> float:
        return time.process_time() - self.cpu_start

    def gc_total(self) -> float:
        return GcMeter.seconds - self.gc_start


def _status_kb(key: str) -> int | None:
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith(key + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak_rss() -> int:
    """Collect garbage, reset the kernel's peak-RSS mark, and return the current RSS in kB.

    Writing 5 to /proc/self/clear_refs resets VmHWM (Linux >= 4.0), so the peak measured
    afterwards belongs to the workload, not to the imports. Elsewhere, ru_maxrss stands in.
    """
    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
    except OSError:
        pass
    rss = _status_kb("VmRSS")
    return rss if rss is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def peak_rss() -> int:
    """The peak RSS in kB since the last reset."""
    hwm = _status_kb("VmHWM")
    return hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def machine() -> dict[str, Any]:
    import platform

    info: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    info["cpu"] = line.split(":", 1)[1].strip()
                    break
        with open("/proc/meminfo") as f:
            info["memory_mb"] = int(f.readline().split()[1]) // 1024
    except OSError:
        pass
    return info
