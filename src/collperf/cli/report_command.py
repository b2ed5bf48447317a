"""`collperf report`: a self-contained HTML page from logs, bench JSON and validate JSON."""

from __future__ import annotations

import shlex
import sys
from typing import Optional

import typer

from collperf import api
from collperf.cli.options import command, network_options
from collperf.cli.render import out
from collperf.spec import NetworkSpec, output_path, ReportSpec


def _html_name(value: Optional[str]) -> Optional[str]:
    """Refuse a wrong file name before a long run, not after it."""
    if value is not None and not value.lower().endswith((".html", ".htm")):
        raise typer.BadParameter(f"{value!r}: expected a file name ending in .html")
    return output_path(value, "--html")


Html = typer.Option(None, "--html", callback=_html_name,
                    help="Also write a self-contained HTML report (verdict, plots, tables) to this file.")


def command_line() -> str:
    """The command as typed, for the page's 'made with' line."""
    return shlex.join(["collperf", *sys.argv[1:]])


@command("report")
@network_options(only=("cluster", "nodes", "profile"))
def report_command(inputs: list[str] = typer.Argument(..., help="Logs (anything diagnose reads), bench JSON, "
                                                               "validate JSON or profiler traces (one file per rank, "
                                                               "a directory or a glob); several logs are compared "
                                                               "side by side."),
                   output: str = typer.Option("report.html", "-o", "--output", help="The HTML file to write."),
                   peak: Optional[str] = typer.Option(None, "--peak", help="Per-rank link rate busbw is judged "
                                                                           "against, e.g. 50GB/s."),
                   title: Optional[str] = typer.Option(None, "--title", help="The page's title."),
                   collective: Optional[str] = typer.Option(None, "--collective", help="Override the collective."),
                   ranks: Optional[int] = typer.Option(None, "--ranks", "-p", help="Rank count, where a log does "
                                                                                   "not say."),
                   network: NetworkSpec = None):
    """One HTML page to share: verdict, plots, fitted regimes, per-size table and findings; no network needed
    to view it."""
    path = api.report(ReportSpec(inputs=inputs, output=output, command=command_line(), peak=peak, network=network,
                                 collective=collective, ranks=ranks, title=title))
    out.print(f"report written to {path}")
