"""Simulate a schedule on a topology: total time, per-step timeline, per-link bytes and utilisation.

Resources are the directed links of the topology (full-duplex: u->v and v->u are separate) and
each rank's port, out and in (`port_Bps`). A transfer of b bytes uses, on its route, every link and
the two ports.

rounds  Fast and vectorized (rounds.py). Step by step: the bytes on every resource are added up; a
        transfer takes its route's latency plus the most loaded resource it crosses (bytes /
        capacity); a step lasts as long as its slowest transfer, plus the most bytes any rank
        reduces x gamma. Like steps are priced once per step class.
events  Congestion-aware (events.py), in the spirit of ASTRA-sim's congestion-aware backend: a rank
        starts step k+1 when its own transfers of step k (sent and received) are done and reduced;
        messages go store-and-forward from rank to rank (a GPU forwarding over NVLink), and
        cut-through across switches: a flow holds every link between two ranks at once. It
        serialises, then pays the segment's latency; flows share each link and port max-min
        fairly, recomputed at every start and finish.
        Like transfers move as one flow where the schedule and the fabric are symmetric: colour
        refinement (symmetry.py) finds the classes of ranks, resources and transfers that provably
        move in lockstep, and the loop runs on them (grouped.py), exactly; on irregular cases, every
        transfer is a flow of its own.
On a uniform full mesh (`topology.full_mesh`) both modes equal the closed form of model/costs.py.
Before a long run, `on_estimate` hears its time and memory (budget.py); a run that would not fit in
`memory_limit_bytes` (default: the memory available now) is refused before it starts.

Both modes read the array form of a schedule (schedule/arrays.py); a tuple Schedule is packed
into it first. Build big schedules straight as arrays (model.algorithms.build.build_array).
A transfer takes the topology's route, or the schedule's own when meta["routes"] has one for
(src, dst, op, first chunk) (packed trees whose edges cross other devices: explicit.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from collperf.errors import UsageError
from collperf.schedule.arrays import as_arrays
from collperf.simulate import budget
from collperf.simulate.events import Flows, per_transfer, run
from collperf.simulate.explicit import transfer_routes
from collperf.simulate.grouped import grouped_flows, type_count
from collperf.simulate.network import RoutedPairs, compile_network
from collperf.simulate.rounds import rounds as _rounds
from collperf.simulate.rounds import step_classes
from collperf.simulate.symmetry import refine
from collperf.topology import Topology


# events mode's engines: classes of like transfers where they are few (auto), or forced either way
ENGINES = ("auto", "grouped", "per-transfer")


@dataclass
class LinkUse:
    link: str
    bytes: float
    capacity_Bps: float
    utilisation: float  # bytes / (capacity x total time)


@dataclass
class SimResult:
    mode: str
    size_bytes: float
    time_s: float
    step_start_s: np.ndarray
    step_end_s: np.ndarray
    links: list[LinkUse] = field(default_factory=list)  # busiest first
    engine: str = "rounds"  # rounds, or events mode's: grouped (classes of like transfers) or per-transfer
    estimate: budget.Estimate | None = None

    def to_json(self, top: int = 10) -> dict:
        return {
            "mode": self.mode,
            "engine": self.engine,
            "size_bytes": self.size_bytes,
            "time_s": self.time_s,
            "step_times_s": (self.step_end_s - self.step_start_s).tolist(),
            "estimate": None if self.estimate is None else vars(self.estimate),
            "busiest_links": [vars(u) for u in self.links[:top]],
        }


def simulate(
    s,
    topo: Topology,
    size_bytes: float,
    mode: str = "rounds",
    reduce_bandwidth_Bps: float = math.inf,
    *,
    engine: str = "auto",
    memory_limit_bytes: float | None = None,
    progress=None,
    on_estimate=None,
) -> SimResult:
    """Time of schedule `s` (a Schedule or an ArraySchedule) moving `size_bytes` (the nccl-tests
    size) on `topo`. Events mode's engine: auto (grouped where the classes are few), grouped (wherever
    refinement converges) or per-transfer. progress(phase, done, total) hears how far a long run
    is; on_estimate(budget.Estimate) its expected time and memory, before it starts."""
    if mode not in ("rounds", "events"):
        raise UsageError(f"simulation mode {mode!r}: expected rounds or events")
    if engine not in ENGINES:
        raise UsageError(f"events engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if size_bytes < 0:
        raise UsageError(f"size {size_bytes} is negative")
    a, route_of, paths = transfer_routes(as_arrays(s))
    classes = step_classes(a, route_of)
    estimate = budget.setup_estimate(sum(len(m[0]) for m in classes[1]))
    _announce(estimate, memory_limit_bytes, on_estimate)
    net = compile_network(
        topo,
        a.ranks,
        _column(classes, 0),
        _column(classes, 1),
        None if route_of is None else _column(classes, 4),
        paths,
        progress,
    )
    chunk_bytes = size_bytes / a.chunks_per_buffer
    gamma = 0.0 if math.isinf(reduce_bandwidth_Bps) else 1.0 / reduce_bandwidth_Bps
    time_s, start, end, load = _rounds(a, net, classes, chunk_bytes, gamma)
    used = "rounds"
    if mode == "events":
        if progress is not None:  # the refinement reports no steps: the bar names it while it runs
            progress("grouping like transfers", 0, 1)
        flows, estimate = _flows(
            a, net, classes, chunk_bytes, route_of, engine, estimate, memory_limit_bytes, on_estimate
        )
        used = estimate.engine
        time_s, start, end = run(
            flows, chunk_bytes, gamma, None if progress is None else lambda done, total: progress("events", done, total)
        )
    return SimResult(mode, float(size_bytes), float(time_s), start, end, _link_use(net, load, time_s), used, estimate)


def _announce(estimate: budget.Estimate, limit: float | None, on_estimate) -> None:
    budget.check(estimate, limit)
    if on_estimate is not None:
        on_estimate(estimate)


def _flows(
    a,
    net: RoutedPairs,
    classes,
    chunk_bytes: float,
    route_of,
    engine: str,
    setup: budget.Estimate,
    limit: float | None,
    on_estimate,
) -> tuple[Flows, budget.Estimate]:
    """Events mode's flows: grouped where refinement finds few classes (or where asked), else per transfer."""
    if engine != "per-transfer":
        of_step, members = classes
        # grouping pays where a class stands for several ranks; a finer partition is the per-transfer loop
        part = refine(members, net, a.ranks, a.ranks if engine == "grouped" else max(1, a.ranks // 4))
        if part is not None:
            per_class = type_count(part)
            count = int(sum(st.repeat * per_class[k] for st, k in zip(a.steps, of_step)))
            if engine == "grouped" or 2 * count <= a.transfer_count:
                estimate = budget.events_estimate(setup, "grouped", count)
                _announce(estimate, limit, on_estimate)
                flows = grouped_flows(a, of_step, part, net, chunk_bytes)
                if flows is not None:
                    return flows, estimate
    estimate = budget.events_estimate(setup, "per-transfer", a.transfer_count)
    _announce(estimate, limit, on_estimate)
    return per_transfer(a, net, chunk_bytes, route_of), estimate


def _column(classes, i: int) -> np.ndarray:
    """Column i (0 src, 1 dst, 4 route) of every step class's transfers, end to end."""
    members = classes[1]
    return np.concatenate([m[i] for m in members]) if members else np.zeros(0, dtype=np.int64)


def _link_use(net: RoutedPairs, load: np.ndarray, time_s: float) -> list[LinkUse]:
    """Every link (ports left out), busiest first: by utilisation, then bytes, then name."""
    links = np.flatnonzero(~net.is_port)
    if not len(links):
        return []
    cap, total = net.capacity[links], load[links]
    util = total / (cap * time_s) if time_s > 0 else np.zeros(len(links))
    names = [net.names[r] for r in links]
    order = sorted(range(len(links)), key=lambda i: (-util[i], -total[i], names[i]))
    return [LinkUse(names[i], float(total[i]), float(cap[i]), float(util[i])) for i in order]


__all__ = ["ENGINES", "LinkUse", "SimResult", "simulate"]
