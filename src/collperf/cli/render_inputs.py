"""The system inputs diagnose reads (NCCL debug logs, topology and graph dumps, link tests) as text: the verdict line,
the system, what NCCL chose, the links, and the check-first list with the line behind each item."""

from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from collperf.api import LinkKind
from collperf.cli.render import out

_LINKS_SHOWN = 12  # a test's links beyond this are summed up (the slow ones always shown)


def print_input(report) -> None:
    out.print(f"{escape(report.source)}: {escape(report.kind)}")
    colour = (
        "red" if any(v.verdict is LinkKind.SLOW for v in report.links) else "yellow" if report.check_first else "green"
    )
    out.print(f"[{colour}]{escape(report.verdict)}[/{colour}]")
    if report.facts:
        out.print("what it shows:")
        for what, value, _line in report.facts:
            out.print(f"  {escape(what)}: {escape(value)}")
    if report.assumed is not None and report.assumed.system is not None:
        out.print(f"system assumed: {escape(report.assumed.describe())}")
    if report.chose:
        out.print("what NCCL chose:")
        for what, value, _line in report.chose:
            out.print(f"  {escape(what)}: {escape(value)}")
    if report.links:
        _links(report.links)
    if report.check_first:
        out.print("[bold]check first:[/bold]")
        for what, line in report.check_first:
            out.print(f"  - {escape(what)}")
            if line:
                out.print(f"    [dim]{escape(line)}[/dim]")
    for note in report.notes:
        out.print(f"[dim]note: {escape(note)}[/dim]")
    out.print()


def _links(verdicts) -> None:
    shown = [v for v in verdicts if v.verdict is LinkKind.SLOW]
    shown += [v for v in verdicts if v.verdict is not LinkKind.SLOW][: max(0, _LINKS_SHOWN - len(shown))]
    table = Table(title="links (measured against the link's rate and the median of the test's links)")
    for column in ("link", "test", "GB/s", "rate GB/s", "verdict"):
        table.add_column(column, justify="right" if "GB/s" in column else "left")
    for v in shown:
        table.add_row(
            escape(v.link),
            escape(v.test),
            f"{v.measured_GBps:.4g}",
            f"{v.rate_GBps:.4g}" if v.rate_GBps else "-",
            escape(v.verdict.value),
        )
    out.print(table)
    if len(verdicts) > len(shown):
        out.print(f"  ... and {len(verdicts) - len(shown)} more link(s), none slow (--json lists every one)")
