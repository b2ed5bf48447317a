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
from collperf.diagnose.hardware import _values, assume, Assumed
from collperf.errors import UsageError
from collperf.fit import MIN_ROWS, Fit, fit, usable
from collperf.ingest import load
from collperf.ingest.table import Table
from collperf.model.nccl import expect, fit_system, system_bound
from collperf.spec import HardwareSpec

MIB = 1 << 20


@dataclass
class SizeVerdict:
    size: int
    time_s: float
    expected_s: float | None      # NCCL's expected time on the assumed (or fitted) system
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

    @property
    def peak_source(self) -> str:
        return self.bound_from

    def to_json(self) -> dict:
        return {"source": self.table.source, "collective": self.table.collective, "ranks": self.table.ranks,
                "nodes": self.table.nodes, "system": self.assumed.to_json(), "expected_from": self.expected_from,
                "bound_from": self.bound_from, "model_from": self.model_from, "verdict": self.verdict,
                "peak_busbw_GBps": self.peak_GBps, "fit": self.fit.to_json() if self.fit else None,
                "sizes": [vars(s) for s in self.sizes], "findings": [vars(f) for f in self.findings],
                "notes": self.table.notes, "skipped_lines": self.table.skipped}


@dataclass
class Expectation:
    """What a row is compared with: expected and bound per size, and where they come from."""

    expected_s: np.ndarray | None
    regime: np.ndarray | None
    choice: list[str]
    runner_up: list[str]
    bound_s: np.ndarray | None
    binding: list[str]
    peak_GBps: float | None
    expected_from: str
    bound_from: str


def expectation(collective: str, sizes, assumed: Assumed, peak_Bps: float | None = None,
                factor: float | None = None, bound_system=None) -> Expectation:
    """NCCL's expected time and the bound on the assumed system (a flat bound from `peak_Bps` if given;
    `bound_system`: another system for the bound, e.g. the unfitted hardware when the expectation is a fit)."""
    n = np.asarray(sizes, dtype=float)
    system = assumed.system
    expected = regime = None
    choice = runner = [""] * len(n)
    expected_from = f"none: {assumed.why_none}"
    if system is not None and system.ranks < 2:
        expected_from = "none: one rank, no collective to model"
        system = None
    if system is not None and len(n):
        pred = expect(collective, n, system)
        expected, regime = pred.time_s, pred.regime
        choice = pred.choice
        runner = [f"{a}/{p}" if a != "-" else "" for a, p in zip(pred.runner_up_algorithm, pred.runner_up_protocol)]
        fitted = system.provenance.get("launch_overhead_us", "")
        expected_from = (f"NCCL's model on {system.name} ({fitted})" if fitted.startswith("fitted")
                         else f"NCCL's model (algorithm/protocol choice and time) on {system.name}")
    bound = None
    binding = [""] * len(n)
    peak_GBps = None
    bound_from = "none: no system assumed and no --peak"
    if peak_Bps is not None:
        f = factor if factor else busbw_factor(collective, system.ranks) if system else 1.0
        bound = n * f / peak_Bps
        binding = ["peak"] * len(n)
        peak_GBps = peak_Bps / 1e9
        bound_from = f"given: --peak {units.format_bandwidth(peak_Bps)} per rank (busbw cannot exceed it)"
    elif (bound_system or system) is not None and len(n):
        system = bound_system or system
        b = system_bound(collective, n, system)
        bound, binding = b.time_s, b.binding
        peak = b.peak_busbw_Bps
        peak_GBps = peak / 1e9 if np.isfinite(peak) else None
        bound_from = (f"two-level bound on {system.name}: the larger of the node-level network bound "
                      f"({system.nics_per_node}x {system.nic_Gbps:g} Gb/s per node) and the intra-node bound"
                      f"{' with in-switch reduction (NVLS)' if system.nvls else ''}"
                      f"{'; host bridge (no P2P)' if system.host_bridge else ''}")
    return Expectation(expected, regime, list(choice), list(runner), bound, list(binding), peak_GBps,
                       expected_from, bound_from)


def _judge(size, time_s, busbw, i, ex: Expectation, collective, runtime, nodes, wrong, fitted_s=None,
           own_regime="") -> SizeVerdict:
    expected = float(ex.expected_s[i]) if ex.expected_s is not None else None
    bound = float(ex.bound_s[i]) if ex.bound_s is not None else None
    regime = str(ex.regime[i]) if ex.regime is not None else own_regime
    text, eff = (mpi.verdict(time_s, bound, regime, wrong) if runtime == "mpi"
                 else V.verdict(time_s, expected, bound, wrong))
    why = V.causes(collective, runtime, regime, nodes, ex.choice[i], ex.runner_up[i]) \
        if text.startswith("slower") else []
    if why and expected and time_s > 10 * expected:
        why.insert(0, V.FAR_OFF)
    return SizeVerdict(size, time_s, expected, bound, busbw, eff, regime, text, ex.choice[i], ex.runner_up[i],
                       ex.binding[i], fitted_s, why, wrong)


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


def diagnose(table: Table, peak_Bps: float | None = None, hardware=None, model=None) -> Diagnosis:
    """Verdicts for every size of `table`. `hardware`: a HardwareSpec (overrides of what the log says);
    `peak_Bps`: a flat bound per rank instead of the hardware's; `model`: a log (path or Table) whose
    fit through NCCL's model gives the expected times (cross-collective prediction)."""
    hardware = hardware or HardwareSpec()
    own = _own_fit(table)
    assumed = assume(table, hardware)
    model_from = None
    hardware_system = assumed.system
    if model is not None:
        system, result, model_from = _model_system(model, hardware, table)
        assumed = Assumed(system, assumed.values, assumed.notes)
        assumed.values = _values(system) + [("fit", result.describe(), f"fitted to {model_from}")]
    runtime = V.runtime_of(table)
    measured = sorted((r for r in table.placement("out-of-place") or table.placement("in-place")
                       if r.size > 0 and isinstance(r.time_s, (int, float)) and np.isfinite(r.time_s)
                       and r.time_s > 0), key=lambda r: r.size)
    rows = [r for r in measured if usable(r)]
    factor = own.factor if own else (busbw_factor(table.collective, table.ranks) if table.ranks else None)
    ex = expectation(table.collective, [r.size for r in measured], assumed, peak_Bps, factor,
                     hardware_system if model_from else None)
    if model_from:
        ex.expected_from = f"NCCL's model fitted to {model_from}, predicting {table.collective} with its own choice"
    if runtime == "mpi":
        ex = mpi.for_mpi(ex, table.collective, [r.size for r in measured], table.ranks, hardware, peak_Bps)
    nodes = assumed.system.nodes if assumed.system else (table.nodes or 1)
    verdicts = []
    for i, r in enumerate(measured):
        latency, bandwidth = own.terms(r.size) if own else (None, None)
        verdicts.append(_judge(r.size, r.time_s, r.busbw_GBps, i, ex, table.collective, runtime, nodes, bool(r.wrong),
                               None if own is None else latency + bandwidth,
                               "" if own is None else "latency" if latency >= bandwidth else "bandwidth"))
    _mark_isolated(verdicts)
    found = F.table_findings(table, own, rows)
    if own is None:
        found.append(F.not_fitted(table, len(rows), MIN_ROWS, ex.expected_s is not None))
    found += F.above_bound(verdicts, assumed, ex.bound_from if peak_Bps is not None else None)
    found += F.slower_overall(verdicts, assumed)
    found += F.latency_bound(verdicts, ex.regime is not None)
    return Diagnosis(table, own, assumed, ex.expected_from, ex.bound_from, ex.peak_GBps, verdicts, found,
                     model_from, mpi.overall(verdicts, found) if runtime == "mpi" else overall(verdicts, found))


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
    kinds = {f.kind for f in found if f.severity == "error"}
    if kinds:
        return "error: " + ", ".join(sorted(kinds)) + " (see the findings)"
    judged = [v for v in verdicts if not v.verdict.startswith("not judged")]
    if not judged:
        return "not judged: " + (verdicts[0].verdict.partition(": ")[2] if verdicts else "no usable rows")
    if any(v.verdict.startswith("above") for v in judged):
        return "above the bound: some sizes beat the assumed hardware's bound, so the system assumed is wrong"
    big = [v for v in judged if v.regime != "latency"] or judged
    slow = [v for v in big if v.verdict.startswith("slower")]
    top = big[-1]
    eff = f", {top.efficiency:.0%} of the bound" if top.efficiency is not None else ""
    if len(slow) > len(big) / 2:
        worst = max(slow, key=lambda v: v.time_s / v.expected_s)
        return (f"slower than expected: {len(slow)} of {len(big)} bandwidth-bound sizes, up to "
                f"{worst.time_s / worst.expected_s:.2f}x at {units.format_size(worst.size)}{eff}")
    return f"as expected: {len(big) - len(slow)} of {len(big)} bandwidth-bound sizes within " \
           f"{V.SLOWER_FACTOR:g}x of NCCL's expected time{eff} at {units.format_size(top.size)}"


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

    def to_json(self) -> dict:
        return {"collective": self.collective, "ranks": self.ranks, "system": self.assumed.to_json(),
                "expected_from": self.expected_from, "bound_from": self.bound_from, "algbw_GBps": self.algbw_GBps,
                **vars(self.row)}


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
                 assumed.system.nodes if assumed.system else 1, False)
    return Judgement(name, ranks, assumed, row, algbw, ex.expected_from, ex.bound_from)
