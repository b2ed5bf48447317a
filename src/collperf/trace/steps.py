"""The step view, as Holistic Trace Analysis defines overlap: per `ProfilerStep`, computation time, communication
time, and exposed communication, the time a collective runs while no computation does (on any stream or,
for a CPU job, on any thread but gloo's).

A call and a computation interval belong to the step in whose window the host issued them (the
kernel's launch), as the GPU runs behind the host. A trace without ProfilerStep annotations is one step.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collperf.trace.overlap import intersect, length, overlapped, subtract, union

WHOLE = "whole trace"


@dataclass
class StepView:
    rank: int
    name: str
    time_s: float
    compute_s: float
    comm_s: float
    exposed_comm_s: float
    calls: list  # (Call, exposed_s) of the step, in time order
    gaps_host_s: float | None = None  # time in the window when neither computation nor a call runs while the
    #                                   host runs a CPU op (None: a CPU job, whose CPU ops are its computation)

    @property
    def idle_s(self) -> float:
        """Neither computation nor exposed communication: the device idle or the host behind (host-bound gaps,
        data loading). Computation and communication are the step's own, which may run past its window: then
        nothing is left idle."""
        return max(0.0, self.time_s - self.compute_s - self.exposed_comm_s)

    @property
    def host_bound_s(self) -> float | None:
        """The part of idle_s with the GPU idle while the host runs CPU ops (the GPU waits for the host: Python,
        the optimizer's host side, a synchronising copy); None for a CPU job."""
        return None if self.gaps_host_s is None else min(self.gaps_host_s, self.idle_s)

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "time_s": self.time_s,
            "compute_s": self.compute_s,
            "comm_s": self.comm_s,
            "exposed_comm_s": self.exposed_comm_s,
            "idle_s": self.idle_s,
            "host_bound_s": self.host_bound_s,
            "rank": self.rank,
        }


def _windows(trace) -> list[tuple[str, float, float]]:
    if trace.steps:
        return trace.steps
    starts = [c.launch_s for c in trace.calls] + list(trace.compute[:, 2])
    ends = [c.end_s for c in trace.calls] + list(trace.compute[:, 1])
    return [(WHOLE, min(starts), max(ends))]


def exposed_per_call(trace) -> np.ndarray:
    """Each call's time while no computation runs."""
    busy = union(trace.compute[:, :2])
    spans = np.array([[c.start_s, c.end_s] for c in trace.calls]).reshape(-1, 2)
    return (spans[:, 1] - spans[:, 0]) - overlapped(busy, spans)


def _clip(u: np.ndarray, a: float, b: float) -> np.ndarray:
    """The disjoint sorted set `u` within [a, b)."""
    lo, hi = np.searchsorted(u[:, 1], a, side="right"), np.searchsorted(u[:, 0], b, side="left")
    return np.clip(u[lo:hi], a, b)


def _host_bound(trace, busy: np.ndarray, calls: np.ndarray, start: float, end: float) -> float:
    """Time in [start, end) when neither computation nor any call runs and the host runs a CPU op."""
    gaps = subtract(np.array([[start, end]]), np.vstack([_clip(busy, start, end), _clip(calls, start, end)]))
    return length(intersect(gaps, _clip(trace.host_ops, start, end)))


def step_views(trace) -> list[StepView]:
    exposed = exposed_per_call(trace)
    busy = union(trace.compute[:, :2])
    every_call = union([[c.start_s, c.end_s] for c in trace.calls])
    launches = np.array([c.launch_s for c in trace.calls])
    views = []
    windows = _windows(trace)
    for k, (name, start, end) in enumerate(windows):
        # the window runs to the next step's start, so work issued between two steps is not lost
        stop = windows[k + 1][1] if k + 1 < len(windows) else end + 1e9
        pick = np.nonzero((launches >= start) & (launches < stop))[0]
        spans = union([[trace.calls[i].start_s, trace.calls[i].end_s] for i in pick])
        mine = trace.compute[(trace.compute[:, 2] >= start) & (trace.compute[:, 2] < stop), :2]
        comm = length(spans)
        hidden = float(np.sum(overlapped(busy, spans))) if len(spans) else 0.0
        views.append(
            StepView(
                trace.rank,
                name,
                end - start,
                length(mine),
                comm,
                comm - hidden,
                [(trace.calls[i], float(exposed[i])) for i in pick],
                _host_bound(trace, busy, every_call, start, end) if len(trace.host_ops) else None,
            )
        )
    return views


def critical(views: list[StepView], top: int = 5) -> list[dict]:
    """Per step, the calls with the most exposed time: those on the step's critical path."""
    out = []
    for v in views:
        worst = sorted((ce for ce in v.calls if ce[1] > 0), key=lambda ce: -ce[1])[:top]
        out += [
            {
                "rank": v.rank,
                "step": v.name,
                "process_group": c.process_group,
                "collective": c.collective,
                "size_bytes": c.size_bytes,
                "time_s": c.time_s,
                "exposed_s": e,
            }
            for c, e in worst
        ]
    return out
