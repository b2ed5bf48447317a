"""`collperf report`: a self-contained HTML page from logs, bench JSON and validate JSON."""

from __future__ import annotations

import shlex
import sys
from typing import Optional

import typer

from collperf import api
from collperf.cli.options import command, network_options, spec_options
from collperf.cli.render import out
from collperf.spec import NetworkSpec, output_path, ReportSpec


def _html_name(value: Optional[str]) -> Optional[str]:
    """Refuse a wrong file name before a long run, not after it."""
    if value is not None and not value.lower().endswith((".html", ".htm")):
        raise typer.BadParameter(f"{value!r}: expected a file name ending in .html")
    return output_path(value, "--html")


Html = typer.Option(
    None,
    "--html",
    callback=_html_name,
    help="Also write a self-contained HTML report (verdict, plots, tables) to this file.",
)


def command_line() -> str:
    """The command as typed, for the page's 'made with' line."""
    return shlex.join(["collperf", *sys.argv[1:]])


@command("report")
@network_options(only=("cluster", "nodes", "profile"))
@spec_options(ReportSpec, "fields", build=False)  # with the inputs, the command line and the network it is built
def report_command(
    inputs: list[str] = typer.Argument(
        ...,
        help="Logs (anything diagnose reads), bench JSON, "
        "validate JSON or profiler traces (one file per rank, "
        "a directory or a glob); several logs are compared "
        "side by side.",
    ),
    network: NetworkSpec = None,
    fields: dict = None,
):
    """One HTML page to share: verdict, plots, fitted regimes, per-size table and findings; no network needed
    to view it."""
    path = api.report(ReportSpec(inputs=inputs, command=command_line(), network=network, **fields))
    out.print(f"report written to {path}")
