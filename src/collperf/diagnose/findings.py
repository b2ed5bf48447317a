"""Table-wide findings: wrong results, dips, non-monotonic times, measurements above the bound, the
latency-bound range (from the expected algorithm/protocol's own terms), reader problems."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from collperf import units
from collperf.model.hardware.gpus import BY_KEY
from collperf.fit import Fit
from collperf.expect.expectation import sharp_lowers_bound
from collperf.diagnose.verdict import Kind, Verdict, runtime_of
from collperf.ingest.table import Table


@dataclass
class Finding:
    kind: str  # correctness, dip, tail-drop, non-monotonic, above-bound, slower-overall, latency-bound,
    #                  single-rank, avg-busbw, placement, convention, incomplete, skipped-lines, inconsistent-rows,
    #                  bad-time, no-busbw
    severity: str  # error, warning, info
    message: str
    sizes_bytes: list[int] = field(default_factory=list)


def table_findings(table: Table, own: Fit, rows) -> list[Finding]:
    found: list[Finding] = []
    wrong = sorted({r.size for r in table.rows if r.wrong})
    if wrong or table.footer.get("status") == "FAILED":
        found.append(
            Finding(
                "correctness",
                "error",
                f"#wrong > 0 at {len(wrong)} size(s) (Out of bounds values: "
                f"{table.footer.get('out_of_bounds', len(wrong))} {table.footer.get('status', '')}): "
                "results were wrong, those times are meaningless and were left out of the fit",
                wrong,
            )
        )
    bus = [(r.size, r.busbw_GBps) for r in rows if r.busbw_GBps is not None]
    found.extend(_dips(bus, nccl=runtime_of(table) == "nccl"))
    backwards = [rows[i - 1].size for i in range(1, len(rows)) if rows[i].time_s < 0.9 * rows[i - 1].time_s]
    if backwards:
        found.append(
            Finding(
                "non-monotonic",
                "warning",
                "a larger size ran faster than "
                + ", ".join(map(units.format_size, backwards))
                + ": that size was slowed by something "
                "other than its size (warm-up, a slow protocol choice, noise)",
                backwards,
            )
        )
    if table.ranks == 1:
        found.append(
            Finding(
                "single-rank",
                "error",
                "this table ran on one rank: busbw is 0 by definition. If several "
                "processes were launched, nccl-tests was built without MPI=1 and each printed its own "
                "table as Rank 0: rebuild with MPI=1",
                [],
            )
        )
    if "avg_busbw_GBps" in table.footer and own is not None and own.peak_busbw_GBps:
        found.append(
            Finding(
                "avg-busbw",
                "info",
                f"'Avg bus bandwidth' {table.footer['avg_busbw_GBps']:g} GB/s "
                "averages every size, the small latency-bound ones included: judge by the peak busbw "
                f"{own.peak_busbw_GBps:.2f} GB/s (at {units.format_size(own.peak_size_bytes)}) and n1/2 = "
                f"{units.format_size(round(own.n_half_bytes)) if own.n_half_bytes else 'n/a'}, the size "
                "that reaches half of it",
                [],
            )
        )
    inplace = {r.size: r.time_s for r in table.placement("in-place")}
    split = [
        r.size
        for r in rows
        if r.size >= 1 << 20 and r.size in inplace and abs(inplace[r.size] - r.time_s) > 0.2 * r.time_s
    ]
    if split:
        found.append(
            Finding(
                "placement",
                "warning",
                "in-place and out-of-place differ by more than 20 % at "
                + ", ".join(map(units.format_size, split))
                + ": noise, or a memory-bound copy in one "
                "path; rerun with more iterations",
                split,
            )
        )
    if table.header.get("old_algbw_convention"):
        found.append(
            Finding(
                "convention",
                "info",
                "this log uses the pre-June-2020 all_gather/reduce_scatter "
                "algbw convention (algbw = busbw); algbw was recomputed as size / time",
                [],
            )
        )
    found.extend(_input_findings(table))
    return found


PLATEAU = 0.5  # neighbours at least this share of the log's best busbw: the flat part of the curve
PLATEAU_NOTCH = 0.85  # a row under this share of the lower of its two neighbours there is a dip


def not_fitted(table: Table, usable_rows: int, needed: int, judged: bool) -> Finding:
    """A table with too few sizes for a fit of its own (one short run of a multi-run log)."""
    run = table.header.get("run")
    where = f"run {run[0]} of {run[1]} in this log" if run else "this table"
    shape = f"{table.ranks} ranks" + (f" on {table.nodes} node(s)" if table.nodes else "") if table.ranks else ""
    how = (
        "its rows are judged against NCCL's expected time and the bound alone"
        if judged
        else "its rows are judged against the bound alone"
    )
    return Finding(
        "not-fitted",
        "info",
        f"{where}{f' ({shape})' if shape else ''} has {usable_rows} usable size(s): "
        f"a fit needs {needed}, so it has no fit of its own; {how}",
        [],
    )


def _dips(bus: list[tuple[int, float]], nccl: bool = True) -> list[Finding]:
    """Ranges of sizes where busbw falls below the level already reached and then recovers: one finding per
    range, every size in it. A row is low when its busbw is under 75 % of the larger of the best busbw at
    smaller sizes and the geometric mean of its two neighbours (the latter catches a one-size notch on the
    rising part of the curve). On the plateau (both neighbours at least half the best busbw of the log) the
    curve is flat, so a row under 85 % of the lower of its two neighbours (a time about 18 % longer than
    either) is a notch too: a 30 % slower 1 GiB row between two healthy ones is not noise on a flat curve,
    while a row just before a protocol step up (lower than the next size, level with the previous one) is
    no notch. A fall that never recovers is reported as its own kind (tail-drop)."""
    found: list[Finding] = []
    top = max((b for _, b in bus), default=0)
    if top <= 0:
        return found
    low, best = [], 0.0
    for i, (size, b) in enumerate(bus):
        level, notch = best, False
        if 0 < i < len(bus) - 1 and min(bus[i - 1][1], bus[i + 1][1]) >= 0.01 * top:
            around = (bus[i - 1][1] * bus[i + 1][1]) ** 0.5
            level = max(level, around)
            lower = min(bus[i - 1][1], bus[i + 1][1])
            notch = lower >= PLATEAU * top and b < PLATEAU_NOTCH * lower
        low.append(best >= 0.01 * top and (b < 0.75 * level or notch))
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
            found.append(
                Finding(
                    "dip",
                    "warning",
                    f"busbw falls and recovers at {span} ({len(sizes)} size(s): "
                    + ", ".join(map(units.format_size, sizes))
                    + "): a protocol/algorithm switch at the "
                    "wrong size, a noisy run or contention; rerun those sizes (-n more iterations)"
                    + (" and check NCCL_ALGO/NCCL_PROTO" if nccl else ""),
                    sizes,
                )
            )
        else:
            found.append(
                Finding(
                    "tail-drop",
                    "warning",
                    f"busbw falls at the largest size(s) {span} and does not "
                    "recover: memory pressure, a protocol limit or contention at large sizes; extend the "
                    "sweep (-e) or rerun",
                    sizes,
                )
            )
        i = j + 1
    return found


def _input_findings(table: Table) -> list[Finding]:
    """What the reader could not use or does not trust: skipped lines, rows whose columns disagree,
    rows with no usable time, a busbw that could not be computed."""
    found: list[Finding] = []
    if table.header.get("incomplete"):
        found.append(
            Finding(
                "incomplete",
                "warning",
                f"the input is incomplete ({table.header['incomplete']}): the "
                "sizes it lacks are not judged, and its last row may have been cut short",
                [],
            )
        )
    if table.skipped:
        shown = "; ".join(table.skipped[:3])
        found.append(
            Finding(
                "skipped-lines",
                "warning",
                f"{len(table.skipped)} line(s) could not be read and were "
                f"skipped: {shown}" + (" ..." if len(table.skipped) > 3 else ""),
                [],
            )
        )
    flagged = [r for r in table.rows if getattr(r, "flags", None)]
    if flagged:
        found.append(
            Finding(
                "inconsistent-rows",
                "warning",
                f"{len(flagged)} row(s) have columns that disagree with "
                f"each other (e.g. line {flagged[0].line}: {flagged[0].flags[0]}): a corrupted or hand-"
                "edited log; they are left out of the fit",
                sorted({r.size for r in flagged}),
            )
        )
    unusable = [
        r for r in table.rows if not (isinstance(r.time_s, (int, float)) and np.isfinite(r.time_s) and r.time_s > 0)
    ]
    if unusable:
        found.append(
            Finding(
                "bad-time",
                "error",
                f"{len(unusable)} row(s) have a time that is not a finite positive "
                f"number (e.g. {unusable[0].time_s!r} s at {unusable[0].size} B): left out of the fit "
                "and the verdicts",
                sorted({r.size for r in unusable}),
            )
        )
    if not table.ranks and table.collective not in ("broadcast", "reduce", "sendrecv"):
        found.append(
            Finding(
                "no-busbw",
                "warning",
                "the rank count is unknown, so busbw (whose factor depends on it) "
                "is not known: the fit and the peak are in algbw; pass --ranks N",
                [],
            )
        )
    return found


# value to check when a measurement beats the bound, per binding resource (what the bound assumed)
_SHARP_LABEL = "in-network reduction (SHARP)"
_CHECK = {
    "network": ("NICs per node", "NIC rate", _SHARP_LABEL),
    "intra-node": ("intra-node link", "in-switch reduction (NVLS)"),
    "host bridge": ("intra-node link",),
}


def above_bound(verdicts, assumed, peak_source: str | None, collective: str = "") -> list[Finding]:
    """Rows faster than the bound: the bound's hardware is wrong, never a > 100 % efficiency. In-network
    reduction is named only where it could lower the bound (an allreduce on InfiniBand)."""
    above = [v for v in verdicts if v.verdict.kind is Kind.ABOVE_BOUND]
    if not above:
        return []
    sizes = [v.size_bytes for v in above]
    sharp = sharp_lowers_bound(collective, assumed.system)
    if peak_source:
        check = f"the --peak given ({peak_source}): the per-rank busbw this path reaches is higher"
    else:
        binding = max({v.binding for v in above}, key=[v.binding for v in above].count)
        shown = {label: (value, src) for label, value, src in assumed.values}
        if not sharp:
            shown.pop(_SHARP_LABEL, None)
        check = (
            "; ".join(
                f"{label} = {shown[label][0]} ({shown[label][1]})"
                for label in _CHECK.get(binding, ())
                if label in shown
            )
            or "the system assumed"
        )
        check = f"the {binding} bound binds: check {check}{_pcie_hint(assumed.system)}"
    worst = max(above, key=lambda v: (v.bound_s + v.bound_latency_s) / v.time_s)
    latency = f" with the links' {units.format_time(worst.bound_latency_s)} latency" if worst.bound_latency_s else ""
    return [
        Finding(
            "above-bound",
            "warning",
            f"{len(sizes)} size(s) ran faster than the lower bound of the assumed "
            f"hardware (e.g. {units.format_size(worst.size_bytes)}: {units.format_time(worst.time_s)} measured, "
            f"bound {units.format_time(worst.bound_s + worst.bound_latency_s)}{latency}): the hardware is not "
            f"what was assumed. {check}; give the "
            f"right value (--cluster, --nics-per-node, --nic-rate, --nvls, {'--sharp, ' if sharp else ''}"
            "--gpu-link-rate, --peak)",
            sizes,
        )
    ]


def _pcie_hint(system) -> str:
    """What a PCIe box may have that its GPU part alone does not say: an NVLink bridge, or peer-to-peer that a
    patched driver turned on (GeForce)."""
    if system is None or system.nvlink_links:
        return ""
    part = BY_KEY.get(system.gpu_part)
    hints = []
    if part is not None and part.links and part.link.startswith("NVLink"):
        hints.append(
            f"cards joined by an NVLink bridge: --gpu-link-rate {part.link_GBps:g}GB/s (the "
            f"{part.name}'s {part.links} {part.link} links, per direction)"
        )
    if not system.p2p:
        hints.append("peer-to-peer turned on (a patched driver, or a log's 'via P2P' lines): --p2p")
    return ("; if the " + " or ".join(hints) + ",") if hints else ""


def slower_overall(verdicts, assumed, overall: Verdict | None = None, own: Fit | None = None) -> list[Finding]:
    """Most judged rows slower than expected: the run as a whole, or the system assumed, is off. Measured as the
    rows are (against the band's slow edge where there is a band, else NCCL's expected time) and worded to agree
    with the log's verdict `overall`: where that is 'as expected, at the slow end', the largest sizes are within
    what healthy runs show and the slow part is named instead of called a slow run."""
    judged = [v for v in verdicts if v.expected_s and v.verdict.kind not in (Kind.NOT_JUDGED, Kind.ABOVE_BOUND)]
    judged = [v for v in judged if v.regime != "latency"] or judged  # where the hardware shows
    slow = [v for v in judged if v.verdict.kind.slower]
    if len(judged) < 3 or len(slow) < 0.75 * len(judged):
        return []
    banded = all(v.expected_high_s for v in judged)
    ratio = float(np.median([v.time_s / (v.expected_high_s if banded else v.expected_s) for v in judged]))
    against = (
        f"above the band of healthy public runs (median {ratio:.2f}x its slow edge)"
        if banded
        else f"slower than NCCL's expected time (median {ratio:.2f}x)"
    )
    shown = ("NIC rate", "NICs per node", "fabric") + (
        ("intra-node link",) if assumed.system is None or assumed.system.gpus_per_node > 1 else ()
    )
    defaults = [
        f"{label} {value}" for label, value, src in assumed.values if src.startswith("default") and label in shown
    ]
    hint = (
        (" Values taken from the catalogue's defaults, not from the log: " + ", ".join(defaults) + ".")
        if defaults
        else ""
    )
    if overall is not None and overall.kind.expected:
        return [
            Finding(
                "slower-overall",
                "info",
                f"{len(slow)} of {len(judged)} bandwidth-bound sizes are {against}, "
                "but at the largest sizes by less than the margin that calls a log slower, so the log is as "
                f"expected, at the slow end.{_mid_sizes(judged, own)}" + hint,
                [v.size_bytes for v in slow],
            )
        ]
    return [
        Finding(
            "slower-overall",
            "warning",
            f"{len(slow)} of {len(judged)} bandwidth-bound sizes are {against}: "
            "either the hardware is slower than assumed (give --cluster, --fabric, --nic-rate, "
            "--nics-per-node) or the whole path is slow (see the causes per size)." + hint,
            [v.size_bytes for v in slow],
        )
    ]


def _mid_sizes(judged, own: Fit | None) -> str:
    """The sizes below the plateau that are slower than the band by more than the largest are, and the per-call
    time this log's own fit gives there: a cost healthy runs do not pay (a container or proxy network, a busy
    host CPU, a slow launch), not a slower network, which would show at the largest sizes too."""
    top = max(v.size_bytes for v in judged)
    plateau = [v.time_s / v.expected_high_s for v in judged if v.size_bytes >= top / 16]
    level = float(np.median(plateau)) if plateau else 1.0
    worse = [v for v in judged if v.size_bytes < top / 16 and v.time_s / v.expected_high_s > 1.5 * max(level, 1.0)]
    if not worse:
        return ""
    worst = max(worse, key=lambda v: v.time_s / v.expected_high_s)
    fitted = next((r for r in (own.regimes if own else []) if r.from_bytes <= worst.size_bytes <= r.to_bytes), None)
    alpha = (
        (
            f"; this log's own fit has a per-call time of {units.format_time(fitted.latency_s)} from "
            f"{units.format_size(fitted.from_bytes)} to {units.format_size(fitted.to_bytes)}"
        )
        if fitted
        else ""
    )
    every = [v.size_bytes for v in judged]
    return (
        f" The slow part is the mid sizes ({units.size_ranges([v.size_bytes for v in worse], every)}: up to "
        f"{worst.time_s / worst.expected_high_s:.2f}x the "
        f"slow edge at {units.format_size(worst.size_bytes)}){alpha}: a per-call cost healthy runs do not pay (a "
        "container or proxy network, a busy host CPU, a slow launch), not a slower network, which would slow the "
        "largest sizes too."
    )


def latency_bound(verdicts, from_model: bool) -> list[Finding]:
    sizes = [v.size_bytes for v in verdicts if v.regime == "latency"]
    if not sizes:
        return []
    why = (
        "NCCL's chosen algorithm/protocol spends more in its latency term than in its bandwidth term"
        if from_model
        else "the fitted latency is larger than the bandwidth term (no system assumed)"
    )
    return [
        Finding(
            "latency-bound",
            "info",
            f"sizes up to {units.format_size(max(sizes))} are latency-bound ({why}): "
            "fewer, bigger messages (bucket fusion), CUDA graphs or one process per GPU help there; "
            "bandwidth does not",
            sizes,
        )
    ]
