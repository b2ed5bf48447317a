"""Before a long simulation: an estimate of its time and memory, and a refusal when the memory is
not there.

The figures are per unit of work, measured on the benchmark (benchmarks/simulator_scaling.py) and
rounded up: set-up (routing every distinct pair, the step classes, the colour refinement) per
transfer of one occurrence of every step class; events mode per flow it holds (every transfer of
the schedule, or one per class and step when grouped). They are estimates, within a factor of two,
so the refusal keeps a margin: what matters is never to start a run that cannot finish.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from collperf.errors import UsageError

_BASE_BYTES = 150 * 2**20  # the interpreter, numpy, scipy and the schedule itself
_SETUP_BYTES = 2048  # per transfer of the step classes (routes, sparse matrix, refinement)
_SETUP_S = 15e-6
_REFINE_S = 40e-6  # grouped: colour refinement, per transfer of the step classes
_FLOW_BYTES = 320  # per flow of events mode (its arrays, groups, DAG, active state)
# grouped: between one event per step (classes in lockstep) and one per flow (a flat ring's classes drift apart)
_FLOW_S = {"per-transfer": 2.5e-6, "grouped": 150e-6}


@dataclass
class Estimate:
    time_s: float
    memory_bytes: float
    engine: str  # rounds, per-transfer or grouped
    flows: int  # what the engine holds: transfers, or classes x steps
    class_transfers: int = 0  # transfers of one occurrence of every step class

    def describe(self) -> str:
        what = {
            "rounds": "rounds mode",
            "per-transfer": f"events mode, {self.flows:,} flows (one per transfer)",
            "grouped": f"events mode, {self.flows:,} flows (classes of like transfers)",
        }[self.engine]
        return f"{what}: about {_duration(self.time_s)} and {_gib(self.memory_bytes)}"


def setup_estimate(class_transfers: int) -> Estimate:
    """Rounds mode, or the set-up that every mode does first."""
    return Estimate(
        class_transfers * _SETUP_S, _BASE_BYTES + class_transfers * _SETUP_BYTES, "rounds", 0, class_transfers
    )


def events_estimate(setup: Estimate, engine: str, flows: int) -> Estimate:
    """The whole run in events mode: set-up, the refinement where grouped, the event loop."""
    refine_s = setup.class_transfers * _REFINE_S if engine == "grouped" else 0.0
    return Estimate(
        setup.time_s + refine_s + flows * _FLOW_S[engine],
        setup.memory_bytes + flows * _FLOW_BYTES,
        engine,
        flows,
        setup.class_transfers,
    )


def available_memory_bytes() -> float:
    """What the machine can give now: MemAvailable of /proc/meminfo, or the free pages where there is none."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return float(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return float(os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (ValueError, OSError, AttributeError):
        return float("inf")


def check(estimate: Estimate, limit_bytes: float | None) -> None:
    """Refuse, before it starts, a run whose estimate exceeds the limit (None: the available memory)."""
    limit = available_memory_bytes() if limit_bytes is None else limit_bytes
    if estimate.memory_bytes > limit:
        raise UsageError(
            f"this simulation would need {estimate.describe()}, over the memory limit of {_gib(limit)} "
            f"({'the memory available now' if limit_bytes is None else 'the limit given'}); "
            f"{_HINTS[estimate.engine]}, or raise --memory-limit"
        )


_HINTS = {
    "rounds": "simulate fewer ranks",
    "grouped": "simulate fewer ranks or use --mode rounds (no contention, less memory)",
    "per-transfer": "simulate fewer ranks, use --mode rounds (no contention, far less memory), or a symmetric "
    "topology and algorithm (events mode then moves classes of like transfers)",
}


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def _duration(t: float) -> str:
    if t < 0.1:
        return "under 0.1 s"
    return f"{t:.1f} s" if t < 120 else f"{t / 60:.1f} min"
