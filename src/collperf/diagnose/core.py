"""Is it good or bad, and why: per-size verdicts and table-wide findings for a measured log, and the
same judgement for one measured number.

Per row: measured vs NCCL's expected time on the assumed system (model/nccl `expect`: NCCL's own
algorithm/protocol choice, launch overhead, never below the bound) is the main verdict; measured vs
the physical bound (model/bounds two-level bound, or a flat --peak) gives the efficiency, which is
bound / measured and never above 100 %: a row faster than the bound is an above-bound finding (the
assumed system is wrong). Latency- or bandwidth-bound comes from the expected algorithm/protocol's
own terms. Rows with wrong results get no performance verdict.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from collperf import units
from collperf.collectives import busbw_factor, get_collective
from collperf.diagnose import findings as F, mpi, verdict as V
from collperf.diagnose.calibrated import Peers, peers
from collperf.diagnose.expectation import Expectation, expectation
from collperf.diagnose.hardware import _values, assume, Assumed
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
    expected_s: float | None      # the typical time of healthy runs (NCCL's model calibrated), or the fit's
    bound_s: float | None         # the physical lower bound
    busbw_GBps: float | None
    efficiency: float | None      # bound / measured, at most 1
    regime: str                   # latency, bandwidth (the expected choice's own terms) or bound
    verdict: str
    choice: str = ""              # NCCL's algorithm/protocol, e.g. "nvls-tree/Simple"
    runner_up: str = ""
    binding: str = ""             # which resource sets the bound: network, intra-node, host bridge, peak
    fitted_s: float | None = None  # this log's own piecewise fit
    causes: list[str] = field(default_factory=list)
    wrong: bool = False
    model_s: float | None = None      # NCCL's own model time
    expected_low_s: float | None = None   # the band of healthy public runs (10th-90th percentile of their time)
    expected_high_s: float | None = None
    band_from: str = ""
    band_logs: int = 0                # how many public runs the band rests on

    @property
    def label(self) -> str:
        """The verdict without the figures it repeats (time, band, bound): what a table's verdict column shows."""
        return self.verdict.split(" (", 1)[0]


@dataclass
class Diagnosis:
    table: Table
    fit: Fit | None
    assumed: Assumed
    expected_from: str            # what the expected time is: NCCL's model on ..., or fitted to <model log>
    bound_from: str
    peak_GBps: float | None       # the busbw no size can exceed (the bound's)
    sizes: list[SizeVerdict]
    findings: list[F.Finding]
    model_from: str | None = None
    verdict: str = ""             # the table's overall verdict, "label: detail"
    peers: Peers | None = None    # public runs like this one, at the largest judged size
    band_from: str = ""           # what the band was calibrated on, said once for every size

    @property
    def peak_source(self) -> str:
        return self.bound_from

    def to_json(self) -> dict:
        return {"source": self.table.source, "collective": self.table.collective, "ranks": self.table.ranks,
                "nodes": self.table.nodes, "system": self.assumed.to_json(), "expected_from": self.expected_from,
                "bound_from": self.bound_from, "band_from": self.band_from, "model_from": self.model_from,
                "verdict": self.verdict, "verdict_label": V.label_of(self.verdict),
                "peak_busbw_GBps": self.peak_GBps, "fit": self.fit.to_json() if self.fit else None,
                "sizes": [vars(s) for s in self.sizes], "findings": [vars(f) for f in self.findings],
                "peers": self.peers.to_json() if self.peers else None,
                "notes": self.table.notes, "skipped_lines": self.table.skipped}


def _judge(size, time_s, busbw, i, ex: Expectation, collective, runtime, nodes, wrong, fitted_s=None,
           own_regime="", one_number: bool = False, gpus_per_node: int = 2) -> SizeVerdict:
    expected = float(ex.expected_s[i]) if ex.expected_s is not None else None
    bound = float(ex.bound_s[i]) if ex.bound_s is not None else None
    regime = str(ex.regime[i]) if ex.regime is not None else own_regime
    low, high = (_at(ex.low_s, i), _at(ex.high_s, i))
    text, eff = (mpi.verdict(time_s, bound, regime, wrong) if runtime == "mpi"
                 else V.verdict(time_s, expected, bound, wrong, low, high))
    why = V.causes(collective, runtime, regime, nodes, ex.choice[i], ex.runner_up[i], gpus_per_node) \
        if text.startswith("slower") else []
    if why and expected and time_s > 10 * expected and one_number:
        # a log's sizes and times are nccl-tests' own: only a number typed by hand can have the convention wrong
        why.insert(0, V.FAR_OFF)
    return SizeVerdict(size, time_s, expected, bound, busbw, eff, regime, text, ex.choice[i], ex.runner_up[i],
                       ex.binding[i], fitted_s, why, wrong, _at(ex.model_s, i), low, high,
                       ex.band_from[i] if ex.band_from else "", ex.band_logs[i] if ex.band_logs else 0)


def _at(values, i) -> float | None:
    if values is None or not np.isfinite(values[i]):
        return None
    return float(values[i])


def _model_system(model_log: "Table | str", hardware, target: Table):
    """Fit the hardware's parameters to the model log (model/nccl fitting), then size it to `target`."""
    if not isinstance(model_log, Table):
        model_log = load(model_log)[0]
    m = assume(model_log, hardware)
    if m.system is None:
        raise UsageError(f"--model-from {model_log.source}: {m.why_none}")
    rows = sorted((r for r in model_log.placement("out-of-place") or model_log.placement("in-place") if usable(r)),
                  key=lambda r: r.size)
    big = [r for r in rows if r.size >= MIB]
    use = big if len(big) >= 3 else rows
    name = Path(model_log.source).name
    result = fit_system(model_log.collective, [r.size for r in use], [r.time_s for r in use], m.system,
                        min_size_bytes=use[0].size if use else 0, source=name)
    system = result.system
    if target.ranks and target.ranks != system.ranks:
        nodes = target.nodes or system.nodes
        if target.ranks % nodes:
            nodes = 1
        system = system.with_("from the ranks in the log / nodes", nodes=nodes, gpus_per_node=target.ranks // nodes)
    return system, result, model_log.source


def diagnose(table: Table, peak_Bps: float | None = None, hardware=None, model=None, bands: dict | None = None,
             peer_runs: list | None = None) -> Diagnosis:
    """Verdicts for every size of `table`. `hardware`: a HardwareSpec (overrides of what the log says);
    `peak_Bps`: a flat bound per rank instead of the hardware's; `model`: a log (path or Table) whose
    fit through NCCL's model gives the expected times (cross-collective prediction). `bands` and
    `peer_runs`: another calibration table and peer list than the committed ones (cross-validation)."""
    hardware = hardware or HardwareSpec()
    own = _own_fit(table)
    assumed = assume(table, hardware)
    model_from = None
    hardware_system = assumed.system
    if model is not None:
        system, result, model_from = _model_system(model, hardware, table)
        assumed = Assumed(system, assumed.values, assumed.notes, suspects=assumed.suspects, settings=assumed.settings)
        assumed.values = _values(system) + [("fit", result.describe(), f"fitted to {model_from}")]
    runtime = V.runtime_of(table)
    measured = sorted((r for r in table.placement("out-of-place") or table.placement("in-place")
                       if r.size > 0 and isinstance(r.time_s, (int, float)) and np.isfinite(r.time_s)
                       and r.time_s > 0), key=lambda r: r.size)
    rows = [r for r in measured if usable(r)]
    factor = own.factor if own else (busbw_factor(table.collective, table.ranks) if table.ranks else None)
    ex = expectation(table.collective, [r.size for r in measured], assumed, peak_Bps, factor,
                     hardware_system if model_from else None, {} if model_from else bands)
    if model_from:
        ex.expected_from = f"NCCL's model fitted to {model_from}, predicting {table.collective} with its own choice"
    if runtime == "mpi":
        ex = mpi.for_mpi(ex, table.collective, [r.size for r in measured], table.ranks, hardware, peak_Bps)
        ex.model_s = ex.low_s = ex.high_s = None        # no NCCL expectation, so no band either
        ex.band_from, ex.band_logs = [], []
    nodes = assumed.system.nodes if assumed.system else (table.nodes or 1)
    per_node = assumed.system.gpus_per_node if assumed.system else 2
    verdicts = []
    for i, r in enumerate(measured):
        latency, bandwidth = own.terms(r.size) if own else (None, None)
        verdicts.append(_judge(r.size, r.time_s, r.busbw_GBps, i, ex, table.collective, runtime, nodes, bool(r.wrong),
                               None if own is None else latency + bandwidth,
                               "" if own is None else "latency" if latency >= bandwidth else "bandwidth",
                               gpus_per_node=per_node))
    _mark_isolated(verdicts)
    found = F.table_findings(table, own, rows)
    if own is None:
        found.append(F.not_fitted(table, len(rows), MIN_ROWS, ex.expected_s is not None))
    found += F.above_bound(verdicts, assumed, ex.bound_from if peak_Bps is not None else None, table.collective)
    judged = _curve_anomalies(mpi.overall(verdicts, found) if runtime == "mpi" else overall(verdicts, found), found,
                              verdicts)
    found += F.slower_overall(verdicts, assumed, judged, own)
    found += outside_band(verdicts)
    found += F.latency_bound(verdicts, ex.regime is not None)
    like = _best_peers(table, hardware_system, verdicts, peer_runs)
    return Diagnosis(table, own, assumed, ex.expected_from, ex.bound_from, ex.peak_GBps, verdicts, found,
                     model_from, judged, like, ex.band_summary)


def _best_peers(table: Table, system, verdicts: list[SizeVerdict], runs) -> Peers | None:
    """Peers at the judged size >= 1 MiB that most public runs share (the larger on a tie)."""
    judged = [v for v in verdicts if v.busbw_GBps and not v.wrong and v.size_bytes >= MIB] or \
        [v for v in verdicts if v.busbw_GBps and not v.wrong]
    found = [peers(table.collective, system, v.size_bytes, v.busbw_GBps, runs, exclude=Path(table.source).stem)
             for v in judged]
    return max(found, key=lambda p: (len(p.runs), p.size), default=None) if system is not None else None


def _own_fit(table: Table) -> Fit | None:
    """The log's own piecewise fit, or None when it has too few sizes (a short run of a multi-run log):
    its rows are still judged, against the model alone."""
    if len([r for r in table.rows if usable(r)]) < MIN_ROWS:
        return None
    try:
        return fit(table)
    except UsageError:      # fewer usable rows of one placement than the count above: no fit either
        return None


def _mark_isolated(verdicts: list[SizeVerdict]) -> None:
    """A slow size between two as-expected neighbours gets noise/warm-up named first."""
    for i, v in enumerate(verdicts):
        if not v.verdict.startswith("slower"):
            continue
        near = [verdicts[j] for j in (i - 1, i + 1) if 0 <= j < len(verdicts)]
        if near and all(n.verdict.startswith(("as expected", "faster")) for n in near):
            v.causes.insert(0, V.ISOLATED)


def overall(verdicts: list[SizeVerdict], found) -> str:
    """The table's verdict, 'label: detail': an error finding first, then above-bound, then the verdict of
    the bandwidth-bound rows (where a collective shows what the hardware gives)."""
    settled = V.settled_overall(verdicts, found, "some sizes beat the assumed hardware's bound, so the system "
                                "assumed is wrong")
    if settled is not None:
        return settled
    judged = [v for v in verdicts if not v.verdict.startswith("not judged")]
    big = [v for v in judged if v.regime != "latency"] or judged
    slow = [v for v in big if v.verdict.startswith("slower")]
    fast = [v for v in big if v.verdict.startswith("faster")]
    top = big[-1]
    eff = f", {top.efficiency:.0%} of the bound" if top.efficiency is not None else ""
    banded = any(v.expected_high_s for v in big)
    against = "the band of healthy public runs" if banded else f"{V.SLOWER_FACTOR:g}x of NCCL's expected time"
    if len(slow) > len(big) / 2:
        worst = max(slow, key=lambda v: v.time_s / (v.expected_high_s or v.expected_s))
        edge = worst.expected_high_s or worst.expected_s
        if banded:
            # where the hardware shows (the bandwidth-bound sizes), against a band of the run's own fabric class
            largest = [v for v in big if v.expected_high_s]
            beyond = beyond_band(largest)
            margin = V.band_margin(int(np.median([v.band_logs for v in largest])))
            borrowed = [v for v in largest if "too few" in v.band_from]
            if len(borrowed) > len(largest) / 2 and beyond >= margin:
                return (f"not judged: {len(slow)} of {len(big)} bandwidth-bound sizes are slower than the band, but "
                        f"that band is borrowed from other fabric classes ({borrowed[-1].band_from}); give --fabric "
                        "if the log's network is not the one assumed")
            if beyond < margin:
                at, by = units.format_size(worst.size_bytes), f"{worst.time_s / edge:.2f}x the band's slow edge"
                worse = "" if worst.time_s / edge < margin else (
                    f"; the mid sizes are slower: up to {by} at {at} (see the findings)" if worst.size_bytes < top.size_bytes / 16
                    else f"; {at} is slower: {by} (see the findings)")
                return (f"as expected, at the slow end of healthy runs: {len(slow)} of {len(big)} bandwidth-bound "
                        f"sizes above {against}, but by {beyond - 1:.0%} (median; a band on "
                        f"{int(np.median([v.band_logs for v in largest]))} runs calls a log slower from "
                        f"{margin - 1:.0%}){eff} at {units.format_size(top.size_bytes)}{worse}")
        return (f"slower than expected: {len(slow)} of {len(big)} bandwidth-bound sizes above {against}, up to "
                f"{worst.time_s / edge:.2f}x {'its slow edge' if banded else 'the expected time'} at "
                f"{units.format_size(worst.size_bytes)}{eff}")
    if banded and len(fast) > len(big) / 2 and \
            _below_band(big) >= V.band_margin(int(np.median([v.band_logs for v in big]))):
        return (f"faster than typical: {len(fast)} of {len(big)} bandwidth-bound sizes faster than 90 % of healthy "
                f"public runs{eff} at {units.format_size(top.size_bytes)}")
    return (f"as expected: {len(big) - len(slow)} of {len(big)} bandwidth-bound sizes within {against}"
            f"{' or faster' if banded and fast else ''}{eff} at {units.format_size(top.size_bytes)}")


def _curve_anomalies(verdict: str, found, verdicts=()) -> str:
    """A good verdict still points at a dip or a tail drop in the curve: the sizes as a whole are fine, yet those
    sizes are not (a known-bad run whose busbw halves at 64 MiB and recovers reads 'as expected' otherwise). Only
    where the verdict looks, at the bandwidth-bound sizes: a latency-bound size that takes longer than the next at
    a protocol switch is no dip in bandwidth (its finding still says it)."""
    if not verdict.startswith(("as expected", "faster")):
        return verdict
    latency = {v.size_bytes for v in verdicts if v.regime == "latency"}
    seen = []
    for f in found:
        sizes = [s for s in f.sizes_bytes if s not in latency]
        if f.kind in ("dip", "tail-drop") and sizes:
            seen.append(f"busbw {'dips' if f.kind == 'dip' else 'drops at the largest sizes'} at "
                        f"{units.size_ranges(sizes)}")
    joint = "; and " if "(see the findings)" in verdict else "; but "   # one "but" per verdict is enough
    return verdict + (f"{joint}{' and '.join(seen)} (see the findings)" if seen else "")


def beyond_band(largest: list[SizeVerdict]) -> float:
    """How far beyond the band's slow edge the log is: the median of time / edge over its bandwidth-bound sizes,
    or over its plateau (the sizes within 16x of the largest), whichever is less. A log slow only at the mid
    sizes has a per-call overhead beyond healthy runs' (a container, a proxy: its own finding), not slower
    hardware; one slow only at the plateau may be a single bad size. Either way not the whole log."""
    top = max(v.size_bytes for v in largest)
    ratio = {v.size_bytes: v.time_s / v.expected_high_s for v in largest}
    plateau = [r for size, r in ratio.items() if size >= top / 16]
    return float(min(np.median(list(ratio.values())), np.median(plateau)))


def _below_band(big: list[SizeVerdict]) -> float:
    """How far the bandwidth-bound sizes are below the band's fast edge (median of edge / time)."""
    largest = [v for v in big if v.expected_low_s]
    return float(np.median([v.expected_low_s / v.time_s for v in largest])) if largest else 0.0


def outside_band(verdicts: list[SizeVerdict]) -> list[F.Finding]:
    """The size-by-size view: which sizes fall outside the band of healthy public runs, and which way."""
    slow = [v.size_bytes for v in verdicts if v.expected_high_s and v.verdict.startswith("slower")]
    fast = [v.size_bytes for v in verdicts if v.expected_low_s and v.verdict.startswith("faster")]
    if not slow and not fast:
        return []
    every = [v.size_bytes for v in verdicts]
    parts = ([f"slower than the band at {units.size_ranges(slow, every)}"] if slow else []) + \
        ([f"faster than typical at {units.size_ranges(fast, every)}"] if fast else [])
    return [F.Finding("outside-band", "info", "sizes outside the band of healthy public runs (10th-90th "
                      f"percentile): {'; '.join(parts)}", slow + fast)]


# ---- one measured number -------------------------------------------------------------------------

@dataclass
class Judgement:
    """One measurement judged like a log row."""

    collective: str
    ranks: int
    assumed: Assumed
    row: SizeVerdict
    algbw_GBps: float
    expected_from: str
    bound_from: str
    peers: Peers | None = None

    def to_json(self) -> dict:
        return {"collective": self.collective, "ranks": self.ranks, "system": self.assumed.to_json(),
                "expected_from": self.expected_from, "bound_from": self.bound_from, "algbw_GBps": self.algbw_GBps,
                **vars(self.row), "verdict_label": V.label_of(self.row.verdict),
                "peers": self.peers.to_json() if self.peers else None}


def diagnose_measurement(spec) -> Judgement:
    """`collperf diagnose allreduce --size 1GB --time 500ms --ranks 16 --cluster dgx-h100 --nodes 2`."""
    name = get_collective(spec.collective).name
    assumed = assume(None, spec.hardware, spec.ranks)
    if assumed.system is None and spec.peak_Bps is None:
        raise UsageError(f"nothing to judge against: {assumed.why_none}")
    ranks = spec.ranks or assumed.system.ranks
    if assumed.system is not None and assumed.system.ranks != ranks:
        raise UsageError(f"--ranks {ranks} but the system has {assumed.system.ranks} GPUs: set --nodes to match")
    factor = busbw_factor(name, ranks)
    ex = expectation(name, [spec.size_bytes], assumed, spec.peak_Bps, factor)
    algbw = spec.size_bytes / spec.time_s / 1e9
    row = _judge(spec.size_bytes, spec.time_s, algbw * factor, 0, ex, name, "nccl",
                 assumed.system.nodes if assumed.system else 1, False, one_number=True,
                 gpus_per_node=assumed.system.gpus_per_node if assumed.system else 2)
    like = peers(name, assumed.system, spec.size_bytes, algbw * factor)
    return Judgement(name, ranks, assumed, row, algbw, ex.expected_from, ex.bound_from, like)
