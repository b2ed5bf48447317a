"""Rendering `collperf trace`: the system assumed, the collectives with their verdicts and choice notes,
the steps, the ranks' skew and the what-if. No computation lives here."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from collperf import units
from collperf.cli.render import out
from collperf.cli.render_logs import _verdict_style, print_assumed


def _t(value) -> str:
    return units.format_time(value) if value is not None else "-"


def _size(value, unit=None) -> str:
    """A size; in a table column, in the column's one binary unit (units.column_unit)."""
    if value is None:
        return "?"
    return units.format_size_in(value, unit) if unit else units.format_size(value)


def _bw(value) -> str:
    return f"{value:.3g}" if value is not None else "-"


# rows shown in a table: a trace of thousands of distinct sizes is read in seconds, but a terminal table of them
# takes minutes to lay out and is not read; the rest are counted and --json has them all
MAX_ROWS = 40


def _more(total: int, what: str) -> None:
    if total > MAX_ROWS:
        out.print(f"  [dim]... and {total - MAX_ROWS} more {what} (--json lists every one)[/dim]")


def print_collectives(rows) -> None:
    if not rows:
        return  # NCCL RAS reports alone: no calls (a note says so)
    basis = (
        "median: the transfer after the last arrival"
        if rows and rows[0].basis.startswith("transfer")
        else "median: one rank's duration, waiting included"
    )
    table = Table(
        title=f"collectives: per (process group, collective, size), by total time; {basis}", title_justify="left"
    )
    for column in (
        "group",
        "collective",
        "size",
        "dtype",
        "ranks",
        "alg/proto",
        "calls",
        "median",
        "total",
        "busbw GB/s",
        "expected",
        "bound",
        "verdict",
    ):
        table.add_column(
            column, justify="left" if column in ("group", "collective", "verdict", "alg/proto") else "right"
        )
    reasons: dict[str, None] = {}
    unit = units.column_unit(r.size_bytes for r in rows[:MAX_ROWS])
    for r in rows[:MAX_ROWS]:
        ran = f"{r.algorithm}/{r.protocol}" if r.algorithm != "-" else "-"
        style = _verdict_style(r.verdict)
        verdict = r.verdict.text
        if not r.verdict.kind.judged and r.verdict.reason:  # the reason once, under the table
            reasons[r.verdict.reason] = None
            verdict = r.verdict.label
        table.add_row(
            escape(r.process_group),
            r.collective,
            _size(r.size_bytes, unit),
            escape(r.dtype),
            str(r.group_size),
            ran,
            str(r.calls),
            _t(r.time_s),
            _t(r.total_s),
            _bw(r.busbw_GBps),
            _t(r.expected_s),
            _t(r.bound_s),
            f"[{style}]{escape(verdict)}[/{style}]" if style else escape(verdict),
        )
    out.print(table)
    _more(len(rows), "rows, with a smaller total time")
    for why in reasons:
        out.print(f"  [dim]not judged: {escape(why)}[/dim]")
    for r in rows[:MAX_ROWS]:
        if r.choice_note:
            out.print(f"  [yellow]choice:[/yellow] {escape(r.process_group)} {r.collective}: {escape(r.choice_note)}")


def print_steps(steps) -> None:
    if not steps:
        return  # Flight Recorder dumps alone: no computation recorded (a note says so)
    host = any(s.host_bound_s is not None for s in steps)
    table = Table(
        title="steps: exposed = communication while no computation runs; idle = neither"
        + ("; host-bound = idle while the host runs CPU ops" if host else ""),
        title_justify="left",
    )
    for column in ("rank", "step", "time", "compute", "comm", "exposed comm", "exposed share", "idle share") + (
        ("host-bound share",) if host else ()
    ):
        table.add_column(column, justify="right")
    for s in steps[:MAX_ROWS]:
        share = f"{s.exposed_comm_s / s.time_s:.0%}" if s.time_s > 0 else "-"
        idle = f"{s.idle_s / s.time_s:.0%}" if s.time_s > 0 else "-"
        bound = (f"{s.host_bound_s / s.time_s:.0%}" if s.time_s > 0 and s.host_bound_s is not None else "-",)
        table.add_row(
            str(s.rank),
            escape(s.name),
            _t(s.time_s),
            _t(s.compute_s),
            _t(s.comm_s),
            _t(s.exposed_comm_s),
            share,
            idle,
            *(bound if host else ()),
        )
    out.print(table)
    _more(len(steps), "steps")


def print_ranks(report) -> None:
    if len(report.ranks) < 2:
        return
    table = Table(title="ranks: arrival skew (a rank that arrives last makes the others wait)", title_justify="left")
    for column in ("rank", "calls", "last to arrive", "median lateness", "waited", "cost to others"):
        table.add_column(column, justify="right")
    for s in report.ranks:
        j = s.to_json()
        table.add_row(
            str(s.rank), str(s.calls), str(s.last_arrivals), _t(j["median_lateness_s"]), _t(s.waited_s), _t(s.cost_s)
        )
    out.print(table)
    st = report.straggler
    if any(v.kind == "compute-side" for v in report.verdicts):
        return  # the verdict names the rank that arrives late; the waiting it cost is in the table
    if st and st["cost_to_others_s"] > 0:
        what = (
            f"[bold]straggler: rank {st['rank']}[/bold]"
            if st["clear"]
            else f"no single straggler (the last arrival moves between ranks); most waited for: rank {st['rank']}"
        )
        out.print(
            f"  {what}, last to arrive at {st['last_arrivals']} of {st['calls']} calls, median "
            f"{_t(st['median_lateness_s'])} late; the others waited {_t(st['cost_to_others_s'])} for it "
            f"({st['share_of_all_waiting']:.0%} of all waiting)"
        )


def print_what_if(w) -> None:
    if w is None:
        return
    doc = w.to_json()
    table = Table(title=f"what-if: {escape(w.description)}; priced with {escape(w.priced_with)}", title_justify="left")
    for column in ("group", "collective", "size", "measured", "what-if", "ratio"):
        table.add_column(column, justify="right")
    unit = units.column_unit(c["size_bytes"] for c in w.collectives[:MAX_ROWS])
    for c in w.collectives[:MAX_ROWS]:
        table.add_row(
            escape(c["process_group"]),
            c["collective"],
            _size(c["size_bytes"], unit),
            _t(c["time_s"]),
            _t(c["what_if_s"]),
            f"{c['ratio']:.3g}x" if c["ratio"] else "-",
        )
    out.print(table)
    _more(len(w.collectives), "collectives")
    out.print(
        f"  exposed communication, all steps and ranks: {_t(doc['exposed_comm_s'])} measured -> "
        f"{_t(doc['what_if_exposed_comm_s'])} what-if ({_t(doc['exposed_change_s'])} change)"
    )
    for note in w.notes:
        out.print(f"  [dim]what-if: {escape(note)}[/dim]")


def print_trace(report) -> None:
    out.print(f"[bold]{len(report.sources)} trace(s), {escape(report.backend)}, world size {report.world_size}[/bold]")
    print_assumed(report.assumed, report.expected_from, report.bound_from)
    print_collectives(report.collectives)
    print_steps(report.steps)
    if report.critical_path:
        worst = max(report.critical_path, key=lambda c: c["exposed_s"])
        out.print(
            f"  most exposed call: rank {worst['rank']} {escape(worst['step'])}: "
            f"{escape(worst['process_group'])} {worst['collective']} {_size(worst['size_bytes'])}, "
            f"{_t(worst['exposed_s'])} of {_t(worst['time_s'])} exposed"
        )
    print_ranks(report)
    for v in report.verdicts:
        style = "bold red" if v.kind in ("hang", "desync") else "bold yellow"
        out.print(f"  [{style}]{escape(v.text)}[/{style}]")
    print_what_if(report.what_if)
    for note in report.notes:
        out.print(f"  [dim]note: {escape(note)}[/dim]")
