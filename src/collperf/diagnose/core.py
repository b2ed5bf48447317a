"""Is it good or bad, and why: per-size verdicts and table-wide findings for a measured log, and the
same judgement for one measured number.

Per row: measured vs NCCL's expected time on the assumed system (model/nccl `expect`: NCCL's own
algorithm/protocol choice, launch overhead, never below the bound) is the main verdict; measured vs
the physical bound (model/bounds two-level bound, or a flat --peak) gives the efficiency, which is
(bound + its latency) / measured and never above 100 %: a row faster than that is an above-bound finding
(the assumed system is wrong). Latency- or bandwidth-bound comes from the expected algorithm/protocol's
own terms. Rows with wrong results get no performance verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from collperf.collectives import busbw_factor
from collperf.diagnose import findings as F, mpi, verdict as V
from collperf.diagnose.band_rule import below_peers
from collperf.diagnose.overall import curve_anomalies, outside_band, overall
from collperf.expect.peers import Peers, peers
from collperf.expect.expectation import Expectation, expectation
from collperf.expect.resolve import assume, Assumed
from collperf.expect.shown import shown_values
from collperf.errors import UsageError
from collperf.fit import MIN_ROWS, Fit, fit, usable
from collperf.ingest import load
from collperf.ingest.table import Table
from collperf.model.nccl import fit_system
from collperf.spec import HardwareSpec

MIB = 1 << 20


@dataclass
class SizeVerdict:
    size_bytes: int
    time_s: float
    expected_s: float | None  # the typical time of healthy runs (NCCL's model calibrated), or the fit's
    bound_s: float | None  # the physical lower bound
    busbw_GBps: float | None
    efficiency: float | None  # (bound + its latency) / measured, at most 1
    regime: str  # latency, bandwidth (the expected choice's own terms) or bound
    verdict: V.Verdict
    choice: str = ""  # NCCL's algorithm/protocol, e.g. "nvls-tree/Simple"
    runner_up: str = ""
    binding: str = ""  # which resource sets the bound: network, intra-node, host bridge, peak
    fitted_s: float | None = None  # this log's own piecewise fit
    causes: list[str] = field(default_factory=list)
    wrong: bool = False
    model_s: float | None = None  # NCCL's own model time
    expected_low_s: float | None = None  # the band of healthy public runs (10th-90th percentile of their time)
    expected_high_s: float | None = None
    band_from: str = ""
    band_logs: int = 0  # how many public runs the band rests on
    bound_latency_s: float = 0.0  # the bound's latency term: above the bound is faster than bound_s + this
    band_borrowed: bool = False  # the band is other fabric classes' (band_rule: it calls from further)
    band_holds: bool = True  # the band's runs speak for this collective (expectation.holds)

    @property
    def label(self) -> str:
        """The verdict without the figures it repeats (time, band, bound): what a table's verdict column shows."""
        return self.verdict.short

    def to_json(self) -> dict:
        return {**vars(self), "verdict": self.verdict.text}


@dataclass(frozen=True)
class Measured:
    """One measured size as judge_row reads it."""

    size_bytes: int
    time_s: float
    busbw_GBps: float | None
    wrong: bool = False
    fitted_s: float | None = None  # the log's own piecewise fit at this size
    own_regime: str = ""  # the fit's regime, where the expectation gives none


@dataclass(frozen=True)
class Context:
    """What a row is judged within: the collective, the tool that ran it, the system's shape."""

    collective: str
    runtime: str = "nccl"  # verdict.runtime_of: nccl, mpi or collperf
    nodes: int = 1
    gpus_per_node: int = 2
    bound_only: bool = False  # against the bound alone (an MPI log, or --peak with no system assumed)
    one_number: bool = False  # a number typed by hand, not a log's row


@dataclass
class Diagnosis:
    table: Table
    fit: Fit | None
    assumed: Assumed
    expected_from: str  # what the expected time is: NCCL's model on ..., or fitted to <model log>
    bound_from: str
    peak_GBps: float | None  # the busbw no size can exceed (the bound's)
    sizes: list[SizeVerdict]
    findings: list[F.Finding]
    model_from: str | None = None
    verdict: V.Verdict | None = None  # the table's overall verdict, "label: detail"
    peers: Peers | None = None  # public runs like this one, at the largest judged size
    band_from: str = ""  # what the band was calibrated on, said once for every size

    @property
    def peak_source(self) -> str:
        return self.bound_from

    @property
    def efficiency_means(self) -> str:
        """What the rows' efficiency divides: an MPI row's bound has no latency term (mpi.py), an NCCL row's has."""
        return (
            "bound / measured time" if V.runtime_of(self.table) == "mpi" else "bound (with its latency) / measured time"
        )

    def to_json(self) -> dict:
        return {
            "source": self.table.source,
            "collective": self.table.collective,
            "ranks": self.table.ranks,
            "nodes": self.table.nodes,
            "system": self.assumed.to_json(),
            "expected_from": self.expected_from,
            "bound_from": self.bound_from,
            "band_from": self.band_from,
            "model_from": self.model_from,
            "verdict": self.verdict.text,
            "verdict_label": self.verdict.label,
            "peak_busbw_GBps": self.peak_GBps,
            "fit": self.fit.to_json() if self.fit else None,
            "sizes": [s.to_json() for s in self.sizes],
            "findings": [vars(f) for f in self.findings],
            "peers": self.peers.to_json() if self.peers else None,
            "notes": self.table.notes,
            "skipped_lines": self.table.skipped,
        }


def judge_row(*, row: Measured, expectation: Expectation, context: Context, at: int = 0) -> SizeVerdict:
    """One size's verdict: `row` against `expectation`'s arrays at index `at`."""
    ex, c, i = expectation, context, at
    expected = float(ex.expected_s[i]) if ex.expected_s is not None else None
    bound = float(ex.bound_s[i]) if ex.bound_s is not None else None
    regime = str(ex.regime[i]) if ex.regime is not None else row.own_regime
    low, high = (_at(ex.low_s, i), _at(ex.high_s, i))
    said, eff = (
        mpi.verdict(row.time_s, bound, regime, row.wrong)
        if c.runtime == "mpi" or c.bound_only
        else V.verdict(
            row.time_s,
            expected,
            bound,
            row.wrong,
            low,
            high,
            ex.bound_latency_s,
            _at(ex.model_s, i),
            bandwidth_bound=regime != "latency",
        )
    )
    why = (
        V.causes(c.collective, c.runtime, regime, c.nodes, ex.choice[i], ex.runner_up[i], c.gpus_per_node)
        if said.kind.slower
        else []
    )
    if why and expected and row.time_s > 10 * expected and c.one_number:
        # a log's sizes and times are nccl-tests' own: only a number typed by hand can have the convention wrong
        why.insert(0, V.far_off(c.collective))
    return SizeVerdict(
        size_bytes=row.size_bytes,
        time_s=row.time_s,
        expected_s=expected,
        bound_s=bound,
        busbw_GBps=row.busbw_GBps,
        efficiency=eff,
        regime=regime,
        verdict=said,
        choice=ex.choice[i],
        runner_up=ex.runner_up[i],
        binding=ex.binding[i],
        fitted_s=row.fitted_s,
        causes=why,
        wrong=row.wrong,
        model_s=_at(ex.model_s, i),
        expected_low_s=low,
        expected_high_s=high,
        band_from=ex.band_from[i] if ex.band_from else "",
        band_logs=ex.band_logs[i] if ex.band_logs else 0,
        bound_latency_s=ex.bound_latency_s,
        band_borrowed=bool(ex.band_borrowed and ex.band_borrowed[i]),
        band_holds=bool(not ex.band_holds or ex.band_holds[i]),
    )


def _at(values, i) -> float | None:
    if values is None or not np.isfinite(values[i]):
        return None
    return float(values[i])


_P2P_BUILT = ("alltoall", "sendrecv")


def _model_system(model_log: "Table | str", hardware, target: Table):
    """Fit the hardware's parameters to the model log (model/nccl fitting), then size it to `target`."""
    if not isinstance(model_log, Table):
        model_log = load(model_log)[0]
    m = assume(model_log, hardware)
    if m.system is None:
        raise UsageError(f"--model-from {model_log.source}: {m.why_none}")
    rows = sorted(
        (r for r in model_log.placement("out-of-place") or model_log.placement("in-place") if usable(r)),
        key=lambda r: r.size,
    )
    big = [r for r in rows if r.size >= MIB]
    use = big if len(big) >= 3 else rows
    name = Path(model_log.source).name
    result = fit_system(
        model_log.collective,
        [r.size for r in use],
        [r.time_s for r in use],
        m.system,
        min_size_bytes=use[0].size if use else 0,
        source=name,
    )
    system = result.system
    if (model_log.collective in _P2P_BUILT) != (target.collective in _P2P_BUILT):
        # NCCL runs alltoall and send/recv as grouped point-to-point operations (their own kernel, chunking and
        # proxy work: src/enqueue.cc), the others as one collective kernel: what a call costs beyond the wire on
        # one path says nothing of the other's (an MI355X 8-GPU alltoall's 300 us per call against its
        # all-reduce's 40-60 us, the corpus's mi355x-xgmi-1x8-* logs). The bandwidth carries over, the overheads
        # stay the hardware's.
        system = system.with_(
            f"the hardware's: a {model_log.collective} call's overhead is not a {target.collective}'s",
            launch_overhead_us=m.system.launch_overhead_us,
            protocol_overhead_us=m.system.protocol_overhead_us,
        )
    if target.ranks and target.ranks != system.ranks:
        nodes = target.nodes or system.nodes
        if target.ranks % nodes:
            nodes = 1
        system = system.with_("from the ranks in the log / nodes", nodes=nodes, gpus_per_node=target.ranks // nodes)
    return system, result, model_log.source


def diagnose(
    table: Table,
    peak_Bps: float | None = None,
    hardware=None,
    model=None,
    bands: dict | None = None,
    peer_runs: list | None = None,
) -> Diagnosis:
    """Verdicts for every size of `table`. `hardware`: a HardwareSpec (overrides of what the log says);
    `peak_Bps`: a flat bound per rank instead of the hardware's; `model`: a log (path or Table) whose
    fit through NCCL's model gives the expected times (cross-collective prediction). `bands` and
    `peer_runs`: another calibration table and peer list than the committed ones (cross-validation)."""
    if not table.collective:  # the table could not settle it (ingest/collective_guess.py): no verdict on a guess
        raise UsageError(
            table.header.get("collective_undecided")
            or f"{table.source}: the collective is not known: give --collective"
        )
    hardware = hardware or HardwareSpec()
    own = _own_fit(table)
    assumed = assume(table, hardware)
    model_from = None
    hardware_system = assumed.system
    if model is not None:
        system, result, model_from = _model_system(model, hardware, table)
        assumed = Assumed(system, assumed.values, assumed.notes, suspects=assumed.suspects, settings=assumed.settings)
        assumed.values = shown_values(system) + [("fit", result.describe(), f"fitted to {model_from}")]
    runtime = V.runtime_of(table)
    measured = sorted(
        (
            r
            for r in table.placement("out-of-place") or table.placement("in-place")
            if r.size > 0 and isinstance(r.time_s, (int, float)) and np.isfinite(r.time_s) and r.time_s > 0
        ),
        key=lambda r: r.size,
    )
    rows = [r for r in measured if usable(r)]
    factor = own.factor if own else (busbw_factor(table.collective, table.ranks) if table.ranks else None)
    ex = expectation(
        table.collective,
        [r.size for r in measured],
        assumed,
        peak_Bps,
        factor,
        hardware_system if model_from else None,
        {} if model_from else bands,
    )
    if model_from:
        ex.expected_from = f"NCCL's model fitted to {model_from}, predicting {table.collective} with its own choice"
    if runtime == "mpi":
        ex = mpi.for_mpi(ex, table.collective, [r.size for r in measured], table.ranks, hardware, peak_Bps)
        ex.model_s = ex.low_s = ex.high_s = None  # no NCCL expectation, so no band either
        ex.band_from, ex.band_logs, ex.band_borrowed, ex.band_holds = [], [], [], []
    nodes = assumed.system.nodes if assumed.system else (table.nodes or 1)
    per_node = assumed.system.gpus_per_node if assumed.system else 2
    # --peak and no system: no expected time, and the peak the user gave is the bound each size is judged by
    bound_only = runtime == "mpi" or (peak_Bps is not None and ex.expected_s is None)
    context = Context(table.collective, runtime, nodes, per_node, bound_only)
    verdicts = []
    for i, r in enumerate(measured):
        latency, bandwidth = own.terms(r.size) if own else (None, None)
        row = Measured(
            r.size,
            r.time_s,
            r.busbw_GBps,
            bool(r.wrong),
            None if own is None else latency + bandwidth,
            "" if own is None else "latency" if latency >= bandwidth else "bandwidth",
        )
        verdicts.append(judge_row(row=row, expectation=ex, context=context, at=i))
    _mark_isolated(verdicts)
    found = F.table_findings(table, own, rows)
    if own is None:
        found.append(F.not_fitted(table, len(rows), MIN_ROWS, ex.expected_s is not None))
    found += F.above_bound(verdicts, assumed, ex.bound_from if peak_Bps is not None else None, table.collective)
    judged = curve_anomalies(
        mpi.overall(verdicts, found) if bound_only else overall(verdicts, found, table.collective, nodes),
        found,
        verdicts,
    )
    found += F.slower_overall(verdicts, assumed, judged, own)
    found += outside_band(verdicts)
    found += F.latency_bound(verdicts, ex.regime is not None)
    like = _best_peers(table, hardware_system, verdicts, peer_runs)
    judged = judged.then(below_peers(judged, like))
    return Diagnosis(
        table,
        own,
        assumed,
        ex.expected_from,
        ex.bound_from,
        ex.peak_GBps,
        verdicts,
        found,
        model_from,
        judged,
        like,
        ex.band_summary,
    )


def _best_peers(table: Table, system, verdicts: list[SizeVerdict], runs) -> Peers | None:
    """Peers at the judged size >= 1 MiB that most public runs share, most of them measured (or read between
    their rows) at that very size, then the larger size."""
    judged = [v for v in verdicts if v.busbw_GBps and not v.wrong and v.size_bytes >= MIB] or [
        v for v in verdicts if v.busbw_GBps and not v.wrong
    ]
    found = [
        peers(table.collective, system, v.size_bytes, v.busbw_GBps, runs, exclude=Path(table.source).stem)
        for v in judged
    ]
    return (
        max(found, key=lambda p: (len(p.runs), sum(r["size_bytes"] == p.size for r in p.runs), p.size), default=None)
        if system is not None
        else None
    )


def _own_fit(table: Table) -> Fit | None:
    """The log's own piecewise fit, or None when it has too few sizes (a short run of a multi-run log):
    its rows are still judged, against the model alone."""
    if len([r for r in table.rows if usable(r)]) < MIN_ROWS:
        return None
    try:
        return fit(table)
    except UsageError:  # fewer usable rows of one placement than the count above: no fit either
        return None


def _mark_isolated(verdicts: list[SizeVerdict]) -> None:
    """A slow size between two as-expected neighbours gets noise/warm-up named first."""
    for i, v in enumerate(verdicts):
        if not v.verdict.kind.slower:
            continue
        near = [verdicts[j] for j in (i - 1, i + 1) if 0 <= j < len(verdicts)]
        if near and all(n.verdict.kind.expected or n.verdict.kind.faster for n in near):
            v.causes.insert(0, V.ISOLATED)
