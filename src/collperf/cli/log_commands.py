"""Commands over measured logs: fit, diagnose."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import (command, Json, network_options,
                                  one_or_many)
from collperf.cli.render import out, print_json
from collperf.cli.report_command import Html, command_line
from collperf.spec import output_path, DiagnoseSpec, LogSpec, NetworkSpec


LogCollective = typer.Option(None, "--collective", help="Override the collective the log is taken to be.")
LogRanks = typer.Option(None, "--ranks", "-p", help="Rank count, where the log does not say.")


@command("fit")
def fit_command(logs: list[str] = typer.Argument(..., help="Logs: nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB."),
                as_json: bool = Json, collective: Optional[str] = LogCollective, ranks: Optional[int] = LogRanks):
    """Fit a piecewise alpha-beta model to measured logs: regimes, peak busbw, n1/2, residuals."""
    tables = api.read_logs(LogSpec(logs, collective, ranks))
    fits = api.fit_tables(tables)
    if as_json:
        print_json(one_or_many([f.to_json() for f in fits]))
        return
    for t, f in zip(tables, fits):
        render.print_table_header(t)
        render.print_fit(f)
        out.print()


@command()
@network_options(only=("cluster", "nodes", "profile"))
def diagnose(logs: list[str] = typer.Argument(..., help="One log, or several to compare side by side."),
             peak: Optional[str] = typer.Option(None, "--peak", help="Per-rank link rate busbw is judged against, "
                                                                     "e.g. 50GB/s."),
             model_from: Optional[str] = typer.Option(None, "--model-from", help="Predict with this log's fit instead."),
             plot: Optional[str] = typer.Option(None, "--plot", help="Write time and busbw plots (PNG/SVG)."),
             as_json: bool = Json, collective: Optional[str] = LogCollective, ranks: Optional[int] = LogRanks,
             html: Optional[str] = Html, network: NetworkSpec = None):
    """Is it good or bad, and why: per-size verdicts against the model and the peak, and the anomalies."""
    output_path(plot, "--plot")
    diagnoses = api.diagnose_logs(DiagnoseSpec(LogSpec(logs, collective, ranks), peak, network, model_from))
    paths = render.plot_diagnoses(diagnoses, plot) if plot else []
    same = len(diagnoses) > 1 and len({d.table.collective for d in diagnoses}) == 1
    comparison = api.compare_logs(diagnoses) if same else None
    if html:
        paths.append(str(api.report(diagnoses, html, command_line())))
    if as_json:
        docs = [d.to_json() for d in diagnoses]
        print_json({"diagnoses": docs, "comparison": comparison} if comparison else one_or_many(docs))
        return
    for d in diagnoses:
        render.print_diagnosis(d)
    if comparison:
        render.print_comparison(diagnoses, comparison)
    for path in paths:
        out.print(f"{'report' if path.endswith('.html') else 'plot'} written to {path}")
