"""Rendering what the log commands return (`collperf fit`, `diagnose`, `judge`, `compare`), `predict
--nccl` and `crossover --nccl`: a log's header, the fitted regimes, the system assumed, verdicts per size. No computation lives here."""

from __future__ import annotations

import math

from rich.markup import escape
from rich.table import Table

from collperf import units
from collperf.api import VerdictKind
from collperf.cli.render import _gb, out


def print_table_header(t) -> None:
    out.print(f"[bold]{escape(t.describe())}[/bold]")
    extra = [f"{k.replace('_', ' ')} {t.header[k]}" for k in ("nccl_tests_version", "nccl_version") if t.header.get(k)]
    if t.header.get("gpus"):
        extra.append(", ".join(t.header["gpus"]))
    if extra:
        out.print("  " + escape("; ".join(extra)))
    for note in t.notes:
        out.print(f"  [dim]note: {escape(note)}[/dim]")
    for line in t.skipped[:5]:
        out.print(f"  [yellow]skipped {escape(line)}[/yellow]")
    if len(t.skipped) > 5:
        out.print(f"  [yellow]... and {len(t.skipped) - 5} more skipped lines[/yellow]")


def print_fit(f) -> None:
    table = Table(title="fitted regimes: t = alpha + size x busbw-factor / B", title_justify="left")
    for column in ("from", "to", "rows", "alpha", "bus bandwidth B"):
        table.add_column(column, justify="right")
    for r in f.regimes:
        table.add_row(
            units.format_size(r.from_bytes),
            units.format_size(r.to_bytes),
            str(r.rows),
            units.format_time(r.latency_s),
            _gb(r.busbw_GBps) + " GB/s",
        )
    out.print(table)
    out.print(
        f"  peak busbw {f.peak_busbw_GBps:.2f} GB/s at {units.format_size(f.peak_size_bytes)}; n1/2 "
        f"{units.format_size(round(f.n_half_bytes)) if f.n_half_bytes else 'n/a'}; R2 (log time) {f.r2:.4f}; "
        f"row error median {100 * f.median_error:.1f} % worst {100 * f.worst_error:.1f} % "
        f"(one straight line: median {100 * f.single_median_error:.1f} %)"
    )
    for note in f.notes:
        out.print(f"  [dim]fit: {escape(note)}[/dim]")


def print_assumed(assumed, expected_from: str | None, bound_from: str | None) -> None:
    """Which system was assumed and where each value came from (and what the expectation and the bound are, where
    the command prints them)."""
    out.print(f"  [bold]system assumed[/bold]: {escape(assumed.describe())}")
    defaults = [(label, value) for label, value, source in assumed.values if source.startswith("default")]
    for label, value, source in assumed.values:
        if not source.startswith("default"):
            out.print(f"    {escape(label)}: {escape(value)}  [dim]({escape(source)})[/dim]")
    if defaults:
        # what neither the log nor a flag said, on one line: the catalogue's values, each a flag away
        whose = "the catalogue's" if assumed.catalogued else "the composed system"
        out.print(
            f"    {whose} {escape(assumed.system.name)} values for what neither the log nor a flag says: "
            + "; ".join(f"{escape(label)} {escape(value)}" for label, value in defaults)
        )
    for note in assumed.notes:
        out.print(f"    [dim]note: {escape(note)}[/dim]")
    if expected_from is not None:
        out.print(f"  expected: {escape(expected_from)}")
    if bound_from is not None:
        out.print(f"  bound: {escape(bound_from)}")


# the colour of each verdict's kind (others: the terminal's own)
STYLES = {
    VerdictKind.AS_EXPECTED: "green",
    VerdictKind.SLOW_END: "green",
    VerdictKind.SLOWER: "yellow",
    VerdictKind.SLOWER_THAN_BOUND: "yellow",
    VerdictKind.ABOVE_BOUND: "yellow",
}


def _verdict_style(verdict) -> str | None:
    return STYLES.get(verdict.kind)


def _causes(sizes) -> None:
    """Each likely cause once, with the sizes it applies to (runs of the log's sizes as ranges)."""
    where: dict[str, list[int]] = {}
    for s in sizes:
        for c in s.causes:
            where.setdefault(c, []).append(s.size_bytes)
    if not where:
        return
    every = [s.size_bytes for s in sizes]
    if len(every) == 1:
        out.print(f"  likely causes at {units.format_size(every[0])}:")
    else:
        out.print("  likely causes of the slower sizes (the sizes each applies to):")
    for c, at in where.items():
        sizes_said = f" [dim]\\[{units.size_ranges(at, every)}][/dim]" if len(every) > 1 else ""
        out.print(f"    - {escape(c)}{sizes_said}")


def _check_first(assumed) -> None:
    """What the log itself shows that commonly costs bandwidth, each with its line."""
    if assumed.suspects:
        out.print("  [bold]check first[/bold] (read from this log):")
        for what, line in assumed.suspects:
            out.print(f"    - {escape(what)}  [dim](log line '{escape(line)}')[/dim]")
    if assumed.settings:
        out.print(
            "  NCCL settings in effect (read from this log): " + ", ".join(escape(what) for what, _ in assumed.settings)
        )


def print_diagnosis(d) -> None:
    print_table_header(d.table)
    print_assumed(d.assumed, d.expected_from, d.bound_from)
    if d.model_from:
        out.print(f"  model log: {escape(d.model_from)}")
    banded = any(s.expected_high_s for s in d.sizes)
    title = (
        "per size (expected: typical time (band: 10th-90th percentile of healthy public runs); slower/faster "
        f"by: measured from the band's edge; eff = {d.efficiency_means}, at most 100 %)"
        if banded
        else f"per size (eff = {d.efficiency_means}, at most 100 %)"
    )
    table = Table(title=title, title_justify="left")
    for column in ("size", "time", "expected", "NCCL choice", "bound", "busbw GB/s", "eff", "regime", "verdict"):
        table.add_column(column, justify="left" if column in ("verdict", "NCCL choice") else "right", overflow="fold")
    for s in d.sizes:
        table.add_row(
            units.format_size(s.size_bytes),
            units.format_time(s.time_s),
            _expected(s.expected_s, s.expected_low_s, s.expected_high_s),
            s.choice or "-",
            units.format_time(s.bound_s) if s.bound_s else "-",
            _gb(s.busbw_GBps),
            f"{100 * s.efficiency:.0f} %" if s.efficiency is not None else "-",
            s.regime,
            escape(s.label),
            style=_verdict_style(s.verdict),
        )
    out.print(table)
    out.print(f"  [bold]verdict[/bold]: {escape(d.verdict.text)}")
    if d.peers is not None:
        out.print(f"  peers: {escape(d.peers.describe())}")
    _check_first(d.assumed)
    _causes(d.sizes)
    if d.fit is not None:
        print_fit(d.fit)
    if not d.findings:
        out.print("  [green]no anomalies found[/green]")
    for f in d.findings:
        color = {"error": "red", "warning": "yellow", "info": "cyan"}[f.severity]
        out.print(f"  [{color}]{f.severity}[/{color}] {f.kind}: {escape(f.message)}")
    out.print()


def print_judgement(j) -> None:
    """One measurement judged like a log row."""
    r = j.row
    out.print(
        f"[bold]{j.collective} of {units.format_size(r.size_bytes)} on {j.ranks} ranks in "
        f"{units.format_time(r.time_s)}[/bold]: algbw {j.algbw_GBps:.2f} GB/s, busbw {_gb(r.busbw_GBps)} GB/s"
    )
    print_assumed(j.assumed, j.expected_from, j.bound_from)
    if r.expected_s:
        band = (
            f"{units.format_time(r.expected_s)}, healthy public runs {units.format_time(r.expected_low_s)}-"
            f"{units.format_time(r.expected_high_s)}"
            if r.expected_high_s
            else units.format_time(r.expected_s)
        )
        # the algorithm is NCCL's choice for the system assumed, not what the public runs ran
        regime = "at the physical bound" if r.regime == "bound" else f"{r.regime}-bound"
        out.print(
            f"  expected {band}; {escape(j.choice_from)}: {escape(r.choice)}, {regime}"
            + (f" (runner-up {escape(r.runner_up)})" if r.runner_up else "")
            + (f"; {escape(j.model_label)} {units.format_time(r.model_s)}" if r.model_s else "")
        )
    if r.bound_s:
        latency = (
            f", {units.format_time(r.bound_s + r.bound_latency_s)} with the links' "
            f"{units.format_time(r.bound_latency_s)} latency"
            if r.bound_latency_s
            else ""
        )
        out.print(
            f"  bound {units.format_time(r.bound_s)} ({r.binding}){latency}; efficiency "
            f"{units.format_percent(r.efficiency)} (bound with its latency / measured)"
        )
    out.print(f"  [bold]verdict[/bold]: [{_verdict_style(j.verdict) or 'default'}]{escape(j.verdict.text)}[/]")
    if j.peers is not None:
        out.print(f"  peers: {escape(j.peers.describe())}")
    _check_first(j.assumed)
    _causes([r])


def _expected(typical, low, high) -> str:
    """'4.27 ms (4.02-5.18 ms)': the typical time of healthy runs and their band, or NCCL's time alone."""
    if not typical:
        return "-"
    if low is None or high is None:
        return units.format_time(typical)
    return f"{units.format_time(typical)} ({units.format_time(low)}-{units.format_time(high)})"


def print_expected_bands(assumed, bands) -> None:
    """`predict --cluster`: NCCL's expected band and the bound per size, beside our algorithms."""
    out.print(
        f"[bold]NCCL on {escape(assumed.describe())}: the expected band[/bold] (the time healthy public runs "
        "of this fabric class take, 10th-90th percentile, fitted on NCCL's own model time and the bound)"
    )
    table = Table(title_justify="left")
    for column in ("size", "expected", "busbw GB/s", "NCCL model", "NCCL choice", "bound"):
        table.add_column(column, justify="left" if column == "NCCL choice" else "right", overflow="fold")
    for b in bands:
        lo, hi = b.busbw_GBps(b.high_s), b.busbw_GBps(b.low_s)
        table.add_row(
            units.format_size(b.size),
            _expected(b.typical_s, b.low_s, b.high_s),
            f"{lo:.0f}-{hi:.0f}" if lo and hi else _gb(b.busbw_GBps(b.typical_s)),
            units.format_time(b.model_s),
            b.choice,
            units.format_time(b.bound_s) if b.bound_s else "-",
        )
    out.print(table)
    if bands:
        out.print(f"  band: {escape(bands[0].band_summary or bands[0].band_from)}")
        if bands[0].model_note:
            out.print(f"  NCCL model: {escape(bands[0].model_note)}")
    # one line per distinct peers text: "no public runs on 3x8 ..." is the same at every size
    for line in dict.fromkeys(b.peers.describe() for b in bands if b.peers is not None):
        out.print(f"  peers: {escape(line)}")


def print_nccl_prediction(assumed, pred, model_note: str = "") -> None:
    """`predict --nccl`: NCCL's choice per size, time, busbw and the runner-up."""
    out.print(f"[bold]{pred.collective}, {pred.ranks} ranks on {pred.nodes} node(s): NCCL's choice[/bold]")
    # where NCCL's tuning model does not price the collective (alltoall, send/recv), the note says what the time is
    what = (
        f"{model_note}, plus launch overhead, never below the bound"
        if model_note
        else "NCCL's own model (tuning.cc) plus launch overhead, never below the bound: what NCCL picks by"
    )
    print_assumed(
        assumed,
        f"{what}; not yet what healthy runs take (that band: the same command without --nccl)",
        "the system's two-level bound",
    )
    table = Table(title="per size", title_justify="left")
    for column in (
        "size",
        "algorithm/protocol",
        "p2p rate" if model_note else "NCCL model",
        "busbw GB/s",
        "bound",
        "regime",
        "runner-up",
        "its time",
    ):
        table.add_column(column, justify="left" if column in ("algorithm/protocol", "runner-up", "regime") else "right")
    for i, n in enumerate(pred.size_bytes):
        other = pred.runner_up_time_s[i]
        table.add_row(
            units.format_size(int(n)),
            pred.choice[i],
            units.format_time(float(pred.time_s[i])),
            _gb(float(pred.busbw_Bps[i]) / 1e9),
            units.format_time(float(pred.bound_s[i])) if pred.bound_s is not None else "-",
            str(pred.regime[i]),
            f"{pred.runner_up_algorithm[i]}/{pred.runner_up_protocol[i]}" if math.isfinite(other) else "-",
            units.format_time(float(other)) if math.isfinite(other) else "-",
        )
    out.print(table)


def print_nccl_crossover(assumed, points) -> None:
    """`crossover --nccl`: where NCCL's (algorithm, protocol) changes, and the range of each choice."""
    out.print(
        f"[bold]{points.collective}, {points.ranks} ranks on {points.nodes} node(s): NCCL's choice by size[/bold]"
    )
    print_assumed(assumed, None, None)
    if points.p2p:
        out.print(
            f"  NCCL runs {points.collective} as point-to-point send/recv, with no algorithm or protocol to "
            "choose: one choice at every size"
        )
    table = Table(title="NCCL's choice by its model (tuning.cc)", title_justify="left")
    for column in ("from", "to", "algorithm/protocol"):
        table.add_column(column, justify="left" if column == "algorithm/protocol" else "right")
    last = len(points.ranges) - 1
    for i, r in enumerate(points.ranges):
        # ranges are [from, to) except the last, which ends at --max inclusive
        end = units.format_size(r.to_bytes) if i == last else f"< {units.format_size(r.to_bytes)}"
        table.add_row(units.format_size(r.from_bytes), end, r.choice)
    out.print(table)
    for s in points.switches:
        why = f"; a step of the model, {s.step}" if s.step else ""
        out.print(
            f"  at {s.size_bytes} B ({units.format_size(s.size_bytes)}): {s.before} -> {s.after} "
            f"(NCCL's model {units.format_time(s.before_time_s)} at one byte less, "
            f"{units.format_time(s.after_time_s)} there{why})"
        )
    if not points.switches and not points.p2p:
        out.print(
            f"  no switch between {units.format_size(points.min_bytes)} and "
            f"{units.format_size(points.max_bytes)}: {points.ranges[0].choice} throughout"
        )


def print_comparison(diagnoses, rows) -> None:
    table = Table(title="side by side (ratio: time / time of the first log)", title_justify="left")
    table.add_column("size", justify="right")
    for i, d in enumerate(diagnoses):
        name = escape(d.table.source.rsplit("/", 1)[-1])
        table.add_column(f"time [{i}] {name}", justify="right")
        table.add_column(f"busbw [{i}]", justify="right")
        if i:
            table.add_column(f"ratio [{i}]", justify="right")
    for r in rows:
        cells = [units.format_size(r["size_bytes"])]
        for i in range(len(diagnoses)):
            t = r[f"time_s_{i}"]
            cells += [units.format_time(t) if t else "-", _gb(r[f"busbw_GBps_{i}"])]
            if i:
                cells.append(f"{r[f'ratio_{i}']:.2f}" if r[f"ratio_{i}"] else "-")
        table.add_row(*cells)
    out.print(table)


def print_not_judged(unjudged, verb: str) -> None:
    """The tables the others were judged without, each with why (one bad table never hides the rest)."""
    if unjudged:
        out.print(f"[yellow]{len(unjudged)} table(s) could not be {verb}:[/yellow]")
        for u in unjudged:
            out.print(f"  {escape(u.why)}")


def print_baseline(report) -> None:
    """diagnose --baseline: per (collective, ranks) the verdict line, then each size against the baseline."""
    for v in report.verdicts:
        colour = "red" if v.label == "degraded" else "green"
        out.print(
            f"{escape(', '.join(v.sources))}: {v.collective} on {v.ranks or '?'} ranks against "
            f"{len(v.baseline_sources)} baseline log(s)"
        )
        out.print(f"[{colour}]{escape(v.verdict)}[/{colour}]")
        table = Table(
            title="per size (speed: 1/time; noise: largest deviation from the median among each side's rows)",
            title_justify="left",
        )
        for name in ("size", "baseline time", "time", "below baseline", "noise (base+new)", "threshold", "verdict"):
            table.add_column(name, justify="left" if name == "verdict" else "right")
        for s in v.sizes:
            table.add_row(
                units.format_size(s.size_bytes),
                units.format_time(s.baseline_time_s),
                units.format_time(s.time_s),
                f"{100 * s.shortfall:+.1f} %",
                f"{100 * s.baseline_noise:.1f}+{100 * s.noise:.1f} %",
                f"{100 * s.threshold:.1f} %",
                "[red]degraded[/red]" if s.degraded else "ok",
            )
        out.print(table)
    for why in report.not_judged:
        out.print(f"[yellow]not judged:[/yellow] {escape(why)}")
