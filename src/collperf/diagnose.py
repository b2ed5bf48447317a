"""Is it good or bad, and why: per-size verdicts and table-wide anomalies for a measured log.

The peak a busbw is judged against is either given (`peak`: the per-rank link rate, as nccl-tests'
busbw is normalised to a flat fabric of that rate) or derived from a cluster: the model's best
algorithm (hierarchical included) at the largest size, since on several nodes busbw legitimately
exceeds a NIC's rate. Verdicts (bandwidth-bound sizes): >= 90 % of peak excellent, 70-90 % typical,
below 70 % investigate. Latency-bound sizes are judged on their latency, not on bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from collperf import units
from collperf.collectives import busbw_factor, get_collective
from collperf.errors import UsageError
from collperf.fit import Fit, fit, usable
from collperf.ingest.table import Table
from collperf.model.costs import coefficients
from collperf.model.predict import Network, best, network_lower_bound


@dataclass
class SizeVerdict:
    size: int
    time_s: float
    fitted_s: float
    ideal_s: float | None
    bound_s: float | None
    busbw_GBps: float | None
    efficiency: float | None      # busbw / peak
    regime: str                   # "latency" or "bandwidth"
    verdict: str


@dataclass
class Finding:
    kind: str        # correctness, dip, non-monotonic, above-peak, single-rank, avg-busbw, placement, convention
    severity: str    # error, warning, info
    message: str
    sizes: list[int] = field(default_factory=list)


@dataclass
class Diagnosis:
    table: Table
    fit: Fit
    peak_GBps: float | None
    peak_source: str
    sizes: list[SizeVerdict]
    findings: list[Finding]

    def to_json(self) -> dict:
        return {"source": self.table.source, "collective": self.table.collective, "ranks": self.table.ranks,
                "nodes": self.table.nodes, "peak_busbw_GBps": self.peak_GBps, "peak_source": self.peak_source,
                "fit": self.fit.to_json(), "sizes": [vars(s) for s in self.sizes],
                "findings": [vars(f) for f in self.findings], "notes": self.table.notes,
                "skipped_lines": self.table.skipped}


def diagnose(table: Table, peak_Bps: float | None = None, network: Network | None = None,
             model: Fit | None = None) -> Diagnosis:
    """Verdicts for every size of `table`. `model` (a fit of another log) replaces the table's own fit
    for the predicted times."""
    own = fit(table)
    reference = model or own
    peak_GBps, peak_source = _peak(table, peak_Bps, network)
    rows = sorted((r for r in table.placement("out-of-place") or table.placement("in-place")
                   if r.size > 0 and usable(r)), key=lambda r: r.size)
    ideal, bound = _ideal_and_bound(table, network, peak_GBps, own, [r.size for r in rows])
    verdicts = []
    for i, r in enumerate(rows):
        latency, bandwidth = reference.terms(r.size) if reference is own else _terms_from_model(model, table, r.size)
        regime = "latency" if latency >= bandwidth else "bandwidth"
        busbw = r.busbw_GBps
        efficiency = busbw / peak_GBps if busbw is not None and peak_GBps else None
        verdicts.append(SizeVerdict(r.size, r.time_s, latency + bandwidth, ideal[i], bound[i], busbw, efficiency,
                                    regime, _verdict(regime, efficiency, r, latency)))
    findings = _findings(table, own, peak_GBps, rows)
    latency_bound = [v.size for v in verdicts if v.regime == "latency"]
    if latency_bound:
        findings.append(Finding("latency-bound", "info", f"sizes up to {units.format_size(max(latency_bound))} are "
                                f"latency-bound (alpha {units.format_time(own.regimes[0].latency_s)} per op at the "
                                "smallest sizes): fewer, bigger messages (bucket fusion) or a log-step algorithm help "
                                "there; bandwidth does not", latency_bound))
    return Diagnosis(table, reference, peak_GBps, peak_source, verdicts, findings)


def _terms_from_model(model: Fit, table: Table, size: int) -> tuple[float, float]:
    """Predict another collective from a fit: the per-step alpha and the bus bandwidth carry over
    (ring step counts from the cost model; busbw normalises the bandwidth term across collectives)."""
    p = table.ranks or model.ranks
    if not p or not model.ranks or model.ranks != p:
        raise UsageError(f"--model-from needs the same rank count: the model log has {model.ranks} ranks, "
                         f"{table.source} has {p}")
    regime = model.regime_of(size)
    steps_model = coefficients(model.collective, _ring_of(model.collective), p, 1)[0]
    steps_here = coefficients(table.collective, _ring_of(table.collective), p, 1)[0]
    alpha_step = regime.latency_s / max(steps_model, 1)
    return alpha_step * steps_here, size * busbw_factor(table.collective, p) / (regime.busbw_GBps * 1e9)


def _ring_of(collective: str) -> str:
    return {"broadcast": "chain", "reduce": "binomial", "scatter": "linear", "gather": "linear",
            "alltoall": "pairwise"}.get(collective, "ring")


def _peak(table: Table, peak_Bps, network) -> tuple[float | None, str]:
    if peak_Bps is not None:
        return peak_Bps / 1e9, f"given: {units.format_bandwidth(peak_Bps)} per rank"
    if network is not None:
        if network.ranks != table.ranks:
            raise UsageError(f"the cluster has {network.ranks} ranks but {table.source} ran on {table.ranks}: "
                             "set --nodes to match")
        big = 1 << 34
        fastest = float(best(table.collective, network, [big])[0].total_s[0])
        peak = float(get_collective(table.collective).busbw(big, network.ranks, fastest)) / 1e9
        return peak, f"the model's best busbw on {network.describe()}"
    return None, "none given (pass --peak or --cluster): efficiency is not judged against hardware"


def _ideal_and_bound(table, network, peak_GBps, own: Fit, sizes):
    if not sizes:
        return [], []
    if network is not None:
        ideal = best(table.collective, network, sizes)[0].total_s
        bound = network_lower_bound(table.collective, network, sizes).total_s
        return list(map(float, ideal)), list(map(float, bound))
    if peak_GBps:
        alpha = own.regimes[0].latency_s
        bus = np.array(sizes, dtype=float) * own.factor / (peak_GBps * 1e9)
        return list(map(float, alpha + bus)), list(map(float, bus))
    return [None] * len(sizes), [None] * len(sizes)


def _verdict(regime: str, efficiency: float | None, row, latency_s: float) -> str:
    if regime == "latency":
        return "latency-bound"
    if efficiency is None:
        return "bandwidth-bound"
    if efficiency >= 0.9:
        return "excellent"
    if efficiency >= 0.7:
        return "typical"
    return ("investigate: bandwidth-bound at {:.0%} of peak: link or NIC misconfigured (PCIe/P2P disabled, wrong "
            "HCA, GDR off), contention, or a peak that this path cannot reach".format(efficiency))


def _findings(table: Table, own: Fit, peak_GBps, rows) -> list[Finding]:
    found: list[Finding] = []
    wrong = sorted({r.size for r in table.rows if r.wrong})
    if wrong or table.footer.get("status") == "FAILED":
        found.append(Finding("correctness", "error", f"#wrong > 0 at {len(wrong)} size(s) (Out of bounds values: "
                             f"{table.footer.get('out_of_bounds', len(wrong))} {table.footer.get('status', '')}): "
                             "results were wrong, those times are meaningless and were left out of the fit", wrong))
    bus = [(r.size, r.busbw_GBps) for r in rows if r.busbw_GBps is not None]
    found.extend(_dips(bus))
    backwards = [rows[i - 1].size for i in range(1, len(rows)) if rows[i].time_s < 0.9 * rows[i - 1].time_s]
    if backwards:
        found.append(Finding("non-monotonic", "warning", "a larger size ran faster than "
                             + ", ".join(map(units.format_size, backwards)) + ": that size was slowed by something "
                             "other than its size (warm-up, a slow protocol choice, noise)", backwards))
    if peak_GBps:
        above = [s for s, b in bus if b > 1.02 * peak_GBps]
        if above:
            found.append(Finding("above-peak", "info", f"busbw exceeds the peak {peak_GBps:.1f} GB/s at "
                                 f"{len(above)} size(s): not an error when NCCL uses a tree on two nodes, in-network "
                                 "reduction (NVLS, SHARP, CollNet) or a hierarchical path; otherwise check the size "
                                 "convention or the peak given", above))
    if table.ranks == 1:
        found.append(Finding("single-rank", "error", "this table ran on one rank: busbw is 0 by definition. If several "
                             "processes were launched, nccl-tests was built without MPI=1 and each printed its own "
                             "table as Rank 0: rebuild with MPI=1", []))
    if "avg_busbw_GBps" in table.footer and own.peak_busbw_GBps:
        found.append(Finding("avg-busbw", "info", f"'Avg bus bandwidth' {table.footer['avg_busbw_GBps']:g} GB/s "
                             "averages every size, the small latency-bound ones included: judge by the peak busbw "
                             f"{own.peak_busbw_GBps:.2f} GB/s (at {units.format_size(own.peak_size)}) and n1/2 = "
                             f"{units.format_size(round(own.n_half_bytes)) if own.n_half_bytes else 'n/a'}, the size "
                             "that reaches half of it", []))
    inplace = {r.size: r.time_s for r in table.placement("in-place")}
    split = [r.size for r in rows if r.size >= 1 << 20 and r.size in inplace
             and abs(inplace[r.size] - r.time_s) > 0.2 * r.time_s]
    if split:
        found.append(Finding("placement", "warning", "in-place and out-of-place differ by more than 20 % at "
                             + ", ".join(map(units.format_size, split)) + ": noise, or a memory-bound copy in one "
                             "path; rerun with more iterations", split))
    if table.header.get("old_algbw_convention"):
        found.append(Finding("convention", "info", "this log uses the pre-June-2020 all_gather/reduce_scatter "
                             "algbw convention (algbw = busbw); algbw was recomputed as size / time", []))
    found.extend(_input_findings(table))
    return found


def _dips(bus: list[tuple[int, float]]) -> list[Finding]:
    """Ranges of sizes where busbw falls below the level already reached and then recovers: one finding per
    range, every size in it. A row is low when its busbw is under 75 % of the larger of the best busbw at
    smaller sizes and the geometric mean of its two neighbours (the latter catches a one-size notch on the
    rising part of the curve). A fall that never recovers is reported as its own kind (tail-drop)."""
    found: list[Finding] = []
    top = max((b for _, b in bus), default=0)
    if top <= 0:
        return found
    low, best = [], 0.0
    for i, (size, b) in enumerate(bus):
        level = best
        if 0 < i < len(bus) - 1 and min(bus[i - 1][1], bus[i + 1][1]) >= 0.01 * top:
            level = max(level, (bus[i - 1][1] * bus[i + 1][1]) ** 0.5)
        low.append(best >= 0.01 * top and b < 0.75 * level)
        best = max(best, b)
    i = 0
    while i < len(bus):
        if not low[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(bus) and low[j + 1]:
            j += 1
        sizes = [bus[k][0] for k in range(i, j + 1)]
        span = units.format_size(sizes[0]) + ("" if len(sizes) == 1 else f" to {units.format_size(sizes[-1])}")
        if j + 1 < len(bus):
            found.append(Finding("dip", "warning", f"busbw falls and recovers at {span} ({len(sizes)} size(s): "
                                 + ", ".join(map(units.format_size, sizes)) + "): a protocol/algorithm switch at the "
                                 "wrong size, a noisy run or contention; rerun those sizes (-n more iterations) and "
                                 "check NCCL_ALGO/NCCL_PROTO", sizes))
        else:
            found.append(Finding("tail-drop", "warning", f"busbw falls at the largest size(s) {span} and does not "
                                 "recover: memory pressure, a protocol limit or contention at large sizes; extend the "
                                 "sweep (-e) or rerun", sizes))
        i = j + 1
    return found


def _input_findings(table: Table) -> list[Finding]:
    """What the reader could not use or does not trust: skipped lines, rows whose columns disagree,
    rows with no usable time, a busbw that could not be computed."""
    found: list[Finding] = []
    if table.skipped:
        shown = "; ".join(table.skipped[:3])
        found.append(Finding("skipped-lines", "warning", f"{len(table.skipped)} line(s) could not be read and were "
                             f"skipped: {shown}" + (" ..." if len(table.skipped) > 3 else ""), []))
    flagged = [r for r in table.rows if getattr(r, "flags", None)]
    if flagged:
        found.append(Finding("inconsistent-rows", "warning", f"{len(flagged)} row(s) have columns that disagree with "
                             f"each other (e.g. line {flagged[0].line}: {flagged[0].flags[0]}): a corrupted or hand-"
                             "edited log; they are left out of the fit", sorted({r.size for r in flagged})))
    unusable = [r for r in table.rows if not (isinstance(r.time_s, (int, float)) and np.isfinite(r.time_s)
                                              and r.time_s > 0)]
    if unusable:
        found.append(Finding("bad-time", "error", f"{len(unusable)} row(s) have a time that is not a finite positive "
                             f"number (e.g. {unusable[0].time_s!r} s at {unusable[0].size} B): left out of the fit "
                             "and the verdicts", sorted({r.size for r in unusable})))
    if not table.ranks and table.collective not in ("broadcast", "reduce", "sendrecv"):
        found.append(Finding("no-busbw", "warning", "the rank count is unknown, so busbw (whose factor depends on it) "
                             "is not known: the fit and the peak are in algbw; pass --ranks N", []))
    return found
