"""Schedules: an algorithm's transfers (schedule, verified_schedule), their verification across rank
counts (verify_all), and their simulation on a topology (simulate, trees, pattern)."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf import units
from collperf.api.common import as_spec, topology_for, with_aliases
from collperf.api.results import one_or_many, VerifiedSchedule, Verification, VerifyRow
from collperf.blink import reports as blink_reports
from collperf.blink.algorithms import BLINK
from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import ALGORITHMS, get_algorithm
from collperf.model.two_level.build import (
    build,
    build_array,
    build_hierarchical,
    build_hierarchical_array,
    DEFAULT_PHASES,
)
from collperf.model.algorithms.modes import HIERARCHICAL, is_two_level, mode_of
from collperf.model.schedule_cost import coefficients
from collperf.schedule.ir import Schedule
from collperf.schedule.verify import VerificationError, verify
from collperf.simulate import SimResult, simulate as run
from collperf.topology import Topology
from collperf.spec import PatternSpec, ScheduleSpec, SimulateSpec, TreesSpec, VerifySpec

# Listing every transfer (the tuple form) grows as p^2 for the rings: beyond this, use the array form.
TUPLE_RANKS_LIMIT = 1024


def schedule(spec: ScheduleSpec | None = None, **options):
    """`collperf schedule`: the explicit schedule of an algorithm (hierarchical: give nodes and ranks_per_node).
    spec.arrays gives the array form (schedule/arrays.py), vectorized for the regular algorithms: what the
    simulator takes at scale. Give a ScheduleSpec, or its fields as keywords."""
    spec = as_spec(ScheduleSpec, spec, options)
    collective, algorithm, ranks, root, segments = (
        spec.collective,
        spec.algorithm,
        spec.ranks,
        spec.root,
        spec.segments,
    )
    nodes, ranks_per_node, arrays = spec.nodes, spec.ranks_per_node, spec.arrays
    intra_algorithm, inter_algorithm = spec.intra_algorithm, spec.inter_algorithm
    flat, two_level = (build_array, build_hierarchical_array) if arrays else (build, build_hierarchical)
    total = nodes * ranks_per_node if is_two_level(algorithm) and nodes and ranks_per_node else ranks
    if not arrays and total is not None and total > TUPLE_RANKS_LIMIT:
        raise UsageError(
            f"{total} ranks: a listed schedule is limited to {TUPLE_RANKS_LIMIT} ranks (a flat ring on "
            f"{total} ranks has {2 * total * (total - 1):,} transfers); `collperf simulate` builds the "
            "compact array form and takes clusters of any size"
        )
    if is_two_level(algorithm):
        if not nodes or not ranks_per_node:
            raise UsageError("the hierarchical schedule needs --nodes and --ranks-per-node")
        if ranks is not None and ranks != nodes * ranks_per_node:
            raise UsageError(f"ranks({ranks}) is not nodes({nodes}) x ranks_per_node({ranks_per_node})")
        name = get_collective(collective).name
        default = DEFAULT_PHASES.get(name, "ring")
        return two_level(name, nodes, ranks_per_node, intra_algorithm or default, inter_algorithm or default, segments)
    if ranks is None:
        raise UsageError("give the rank count: --ranks P")
    return flat(collective, algorithm, ranks, root, segments)


def verified_schedule(spec: ScheduleSpec | None = None, **options) -> VerifiedSchedule:
    """`collperf schedule`: the schedule (spec as `schedule`), verified symbolically, and its cost
    coefficients (alpha, n beta, n gamma) counted from its steps (the result unpacks as that pair)."""
    s = schedule(as_spec(ScheduleSpec, spec, options))
    verify(s)
    return VerifiedSchedule(s, coefficients(s))


def verify_all(spec: VerifySpec | None = None, progress=None, **options) -> Verification:
    """`collperf verify`: build and symbolically verify every selected algorithm for every rank count
    in min_ranks..max_ranks (pipelined ones for each segment count), and the two-level schedules
    with the default phase algorithms on every nodes x ranks_per_node factorization. progress() hears
    of each rank count checked. Give a VerifySpec, or its fields as keywords."""
    spec = as_spec(VerifySpec, spec, options)
    collective, algorithm, segments = spec.collective, spec.algorithm, spec.segments
    min_ranks, max_ranks = spec.min_ranks, spec.max_ranks
    wanted = get_collective(collective).name if collective is not None else None
    chosen = [a for a in ALGORITHMS if wanted in (None, a.collective) and algorithm in (None, a.name)]
    if algorithm is not None and not is_two_level(algorithm) and not chosen:
        get_algorithm(collective or "allreduce", algorithm)  # raises with the known names
        raise UsageError(f"no algorithm {algorithm!r} for {collective or 'any collective'}")
    rows = []
    for alg in chosen:
        row = VerifyRow(alg.collective, alg.name, 0, [])
        for p in range(min_ranks, max_ranks + 1):
            if alg.unavailable(p):
                continue
            for k in segments if alg.pipeline else (1,):
                _check(
                    row,
                    lambda: build(alg.collective, alg.name, p, segments=k),
                    f"p={p}" + (f",k={k}" if alg.pipeline else ""),
                )
            row.ranks_checked += 1
            if progress:
                progress()
        rows.append(row)
    if spec.hierarchical and (algorithm is None or is_two_level(algorithm)):
        for name, phase_algorithm in DEFAULT_PHASES.items():
            if wanted not in (None, name):
                continue
            row = VerifyRow(name, HIERARCHICAL.name, 0, [])
            for p in range(max(min_ranks, 4), max_ranks + 1):
                for nodes in (n for n in range(2, p // 2 + 1) if p % n == 0):
                    _check(
                        row,
                        lambda: build_hierarchical(name, nodes, p // nodes, phase_algorithm, phase_algorithm),
                        f"{nodes}x{p // nodes}",
                    )
                    row.ranks_checked += 1
            rows.append(row)
    return Verification(rows, min_ranks, max_ranks)


def _check(row: VerifyRow, make_schedule, label: str) -> None:
    try:
        verify(make_schedule())
    except VerificationError as e:
        row.failures.append(f"{label}: {e}")


@dataclass
class Simulation:
    """A simulated run: the simulator's result with the schedule and topology it ran on."""

    result: SimResult
    schedule: Schedule
    topology: Topology
    algbw_Bps: float | None  # None where the time is 0 (one rank)
    busbw_Bps: float | None
    notes: list = field(default_factory=list)

    def to_json(self) -> dict:
        doc = self.result.to_json()
        doc.update(
            {
                "collective": self.schedule.collective,
                "algorithm": self.schedule.algorithm,
                "ranks": self.schedule.ranks,
                "topology": self.topology.name,
                "algbw_GBps": None if self.algbw_Bps is None else self.algbw_Bps / 1e9,
                "busbw_GBps": None if self.busbw_Bps is None else self.busbw_Bps / 1e9,
            }
        )
        if self.notes:
            doc["notes"] = list(self.notes)
        return doc


class Simulations(list):
    """`simulate`: one Simulation per size."""

    def to_json(self):
        return one_or_many([s.to_json() for s in self])


def simulate(spec: SimulateSpec | PatternSpec, progress=None, on_estimate=None):
    """`collperf simulate`: the schedule of an algorithm on a topology, simulated at each size (a PatternSpec,
    as spec.simulate_request makes for --pattern: one of Blink's micro-benchmarks, `pattern`).
    Algorithm blink: packed trees on the group spec.ranks, simulated on the group's view of the topology.
    progress(phase, done, total) hears how far a long run is, on_estimate(simulate.budget.Estimate) its
    expected time and memory before it starts; a run over spec.memory_limit (default: the memory
    available) is refused before it starts (UsageError, with the estimate)."""
    if isinstance(spec, PatternSpec):
        return pattern(spec)
    net = spec.network
    topo, base = topology_for(spec.topology, net)
    if mode_of(spec.algorithm) is BLINK:
        runs = blink_reports.blink_schedules(spec, topo)
    else:
        nodes, per_node = topo.shape or (None, None)
        sched = schedule(
            ScheduleSpec(
                collective=spec.collective,
                algorithm=with_aliases(spec.collective, spec.algorithm),
                ranks=topo.ranks,
                root=spec.root or 0,
                segments=spec.segments or 1,
                nodes=nodes,
                ranks_per_node=per_node,
                intra_algorithm=spec.intra_algorithm,
                inter_algorithm=spec.inter_algorithm,
                arrays=True,
            )
        )
        runs = [(sched, topo, [])] * len(spec.sizes_bytes)
    reduce_Bps = units.parse_bandwidth(net.reduce_bandwidth)
    if net.profile is not None and reduce_Bps == float("inf"):
        reduce_Bps = base.intra.reduce_bandwidth_Bps
    out = Simulations()
    for size, (sched, where, notes) in zip(spec.sizes_bytes, runs):
        factor = get_collective(sched.collective).busbw_factor(sched.ranks)
        result = run(
            sched,
            where,
            size,
            spec.mode,
            reduce_Bps,
            engine=spec.engine,
            memory_limit_bytes=spec.memory_limit_bytes,
            progress=progress,
            on_estimate=on_estimate,
        )
        if "ranks" in sched.meta:  # a group's view (blink): links named as the topology names them
            result = blink_reports.topology_names(result, sched.meta["ranks"])
        algbw = result.size_bytes / result.time_s if result.time_s > 0 else None  # None: nothing moved
        out.append(Simulation(result, sched, where, algbw, algbw * factor if algbw is not None else None, notes))
    return out


def trees(spec: TreesSpec):
    """`collperf trees`: Blink's packed spanning trees on a group of a topology's ranks, their rate and
    the max-flow bound, beside NCCL's rings on the same group (blink.reports.TreesResult)."""
    return blink_reports.trees(spec)


def pattern(spec: PatternSpec):
    """`collperf simulate --pattern`: one of Blink's micro-benchmarks, throughput vs size (blink.reports.PatternRun)."""
    return blink_reports.pattern(spec)
