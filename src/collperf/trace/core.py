"""`collperf trace`: read the ranks' traces, match their calls, judge each collective, lay out the steps,
name the straggler and price the what-if."""

from __future__ import annotations

from dataclasses import dataclass, field

from collperf.diagnose import Assumed
from collperf.trace import ranks as R
from collperf.errors import UsageError
from collperf.trace.judge import Row, expected_and_bound, one_rank, rows, sized
from collperf.trace.ras import is_ras, ras_verdicts
from collperf.trace.inputs import read_job
from collperf.trace.inspector_trace import KIND as INSPECTOR
from collperf.trace.events import KINETO
from collperf.trace.read import trace_files
from collperf.trace.steps import StepView, critical, step_views
from collperf.trace.system import assume_system
from collperf.trace.verdicts import verdicts
from collperf.trace.whatif import WhatIf, target_system, what_if


# one rank's measured durations include waiting for the others, which another system would not remove
WAITING_IN_WHAT_IF = (
    "one rank's trace: the measured times include waiting for the other ranks, which a faster "
    "network does not remove; the change is an upper estimate"
)


AS_RUN = (
    "NCCL Inspector records name the algorithm and protocol each call ran (coll_algo/coll_proto): each row's "
    "expected time is NCCL's model of what ran; the choice check says where NCCL's default differs"
)


@dataclass
class TraceReport:
    sources: list
    backend: str
    world_size: int
    assumed: Assumed
    expected_from: str
    bound_from: str
    collectives: list[Row]
    steps: list[StepView]
    ranks: list  # RankSkew per rank (several files)
    straggler: dict | None
    critical_path: list
    what_if: WhatIf | None
    traces: list = field(repr=False, default_factory=list)
    notes: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)  # Verdict: hang, desync, compute-side, network-side

    def to_json(self) -> dict:
        return {
            "sources": self.sources,
            "backend": self.backend,
            "world_size": self.world_size,
            "system": {**self.assumed.to_json(), "expected_from": self.expected_from, "bound_from": self.bound_from},
            "collectives": [r.to_json() for r in self.collectives],
            "steps": [s.to_json() for s in self.steps],
            "ranks": [s.to_json() for s in self.ranks] if len(self.ranks) > 1 else [],
            "straggler": self.straggler,
            "critical_path": self.critical_path,
            "what_if": self.what_if.to_json() if self.what_if else None,
            "notes": self.notes,
            "verdicts": [v.to_json() for v in self.verdicts],
        }


def _provenance(assumed: Assumed, collectives: list[Row], peak_Bps: float | None = None) -> tuple[str, str]:
    """Where expected and bound come from, as diagnose words it (for the first judged collective)."""
    judged = next((r for r in collectives if r.size_bytes and r.group_size > 1), None)
    if judged is not None and assumed.system is None and peak_Bps is not None:
        why = assumed.why_none or "no system assumed"
        return f"none: {why}", expected_and_bound(
            judged.collective, [judged.size_bytes], assumed, peak_Bps, judged.group_size
        ).bound_from
    if judged is None or assumed.system is None:
        why = assumed.why_none or "no collective with a known size"
        return f"none: {why}", f"none: {why}"
    try:
        ex = expected_and_bound(judged.collective, [judged.size_bytes], sized(assumed, judged), peak_Bps)
    except UsageError:  # a collective NCCL has no model of: its row says so
        return "NCCL's model on the assumed system", "the two-level bound on the assumed system"
    return ex.expected_from, ex.bound_from


def analyse(spec, on_progress=None) -> TraceReport:
    """A TraceSpec in, the report out. NCCL RAS reports among the files add their verdicts (dead, missing,
    lagging ranks); the other files are the ranks' traces or dumps (read side by side: fanout.py;
    `on_progress(fanout.Progress)` after each)."""
    files = trace_files(spec.paths)
    ras = [f for f in files if is_ras(f)]
    found = [v for f in ras for v in ras_verdicts(f)]
    if len(ras) == len(files):
        return _ras_only(ras, found)
    reading: list[str] = []
    traces = read_job([f for f in files if f not in ras], spec.jobs, spec.engine, on_progress, reading)
    assumed = assume_system(traces, spec.hardware)
    matched, notes = R.match(traces)
    many = len(traces) > 1
    as_run = any(t.kind == INSPECTOR for t in traces)
    table = rows(matched, assumed, R.spread(matched) if many else None, spec.peak_Bps, as_run)
    if as_run and assumed.system is not None:
        notes.append(AS_RUN)
    if not many:
        notes += one_rank(table)
    views = [v for t in traces if t.kind == KINETO for v in step_views(t)]  # a dump records no computation
    stats = R.skew(traces, matched) if many else []
    whatif = None
    if spec.what_if_cluster is not None or spec.algorithm:
        system = target_system(spec.what_if_cluster, spec.what_if_nodes, assumed)
        whatif = what_if(table, views, system, traces[0].world_size, spec.algorithm)
        if not many:
            whatif.notes.append(WAITING_IN_WHAT_IF)
    expected_from, bound_from = _provenance(assumed, table, spec.peak_Bps)
    notes = list(dict.fromkeys(reading + [n for t in traces for n in t.notes] + notes + assumed.notes))
    if many and len({t.host for t in traces}) > 1:
        notes.append(
            "ranks on several hosts: their start times are compared as recorded, so the skew includes "
            "any offset between the hosts' clocks"
        )
    return TraceReport(
        [t.source for t in traces],
        traces[0].backend,
        traces[0].world_size,
        assumed,
        expected_from,
        bound_from,
        table,
        views,
        stats,
        R.straggler(stats) if many else None,
        critical(views),
        whatif,
        traces,
        notes,
        found + (verdicts(traces, matched, table) if many else []),
    )


def _ras_only(files, found) -> TraceReport:
    """A report of RAS files alone: their verdicts, no calls."""
    why = "an NCCL RAS report names no GPU"
    none = Assumed(None, [], [], why)
    return TraceReport(
        [str(f) for f in files],
        "nccl",
        0,
        none,
        f"none: {why}",
        f"none: {why}",
        [],
        [],
        [],
        None,
        [],
        None,
        [],
        ["NCCL RAS reports only: no calls to judge; give the ranks' traces or Flight Recorder dumps with them"],
        found,
    )
