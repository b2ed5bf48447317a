"""Commands over measured logs: fit, diagnose."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render, render_inputs, render_logs
from collperf.cli.options import command, field_option, hardware_options, Json
from collperf.cli.progress import progress
from collperf.cli.render import out, print_json
from collperf.cli.report_command import Html, command_line
from collperf.errors import UsageError
from collperf.spec import output_path, BaselineSpec, DiagnoseSpec, HardwareSpec, LogSpec, MeasurementSpec


def _counted(steps, verb: str):
    """A callback (done, total[, path]) that moves the bar: logs read, tables fitted or judged."""

    def on_item(done: int, total: int, path=None):
        steps.done(done, total, f"{verb} {done}/{total}" + (f" ({path})" if path else ""))

    return on_item


LogCollective = field_option(LogSpec, "collective")
LogRanks = field_option(LogSpec, "ranks")
LogMaxBytes = field_option(LogSpec, "max_bytes")


@command("fit")
def fit_command(
    logs: list[str] = typer.Argument(..., help="Logs: nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB."),
    as_json: bool = Json,
    collective: Optional[str] = LogCollective,
    ranks: Optional[int] = LogRanks,
    max_bytes: Optional[str] = LogMaxBytes,
):
    """Fit a piecewise alpha-beta model to measured logs: regimes, peak busbw, n1/2, residuals."""
    with progress("reading logs", as_json, total=len(logs)) as steps:
        tables = api.read_logs(
            LogSpec(paths=logs, collective=collective, ranks=ranks, max_bytes=max_bytes), on_log=_counted(steps, "read")
        )
        fits = api.fit_tables(tables, on_table=_counted(steps, "fitted"))
    if as_json:
        print_json(fits.to_json())
        return
    for f in fits:
        render_logs.print_table_header(f.table)
        render_logs.print_fit(f)
        out.print()
    render_logs.print_not_judged(fits.not_judged, "fitted")


@command()
@hardware_options()
def diagnose(
    logs: list[str] = typer.Argument(
        ...,
        help="One log, or several to compare side by side; or a collective with --size and --time (one measurement).",
    ),
    size: Optional[str] = field_option(MeasurementSpec, "size", default=None),
    time: Optional[str] = field_option(MeasurementSpec, "time", default=None),
    peak: Optional[str] = field_option(DiagnoseSpec, "peak"),
    model_from: Optional[str] = field_option(DiagnoseSpec, "model_from"),
    baseline: Optional[list[str]] = field_option(BaselineSpec, "baseline", default=None),
    threshold: str = field_option(BaselineSpec, "threshold"),
    plot: Optional[str] = typer.Option(None, "--plot", help="Write time and busbw plots (PNG/SVG)."),
    as_json: bool = Json,
    collective: Optional[str] = LogCollective,
    ranks: Optional[int] = LogRanks,
    html: Optional[str] = Html,
    max_bytes: Optional[str] = LogMaxBytes,
    hardware: HardwareSpec = None,
):
    """Is it good or bad, and why: each size against NCCL's expected time and the hardware's bound, on the
    system assumed from the log (the hardware options override it), and the anomalies. With --baseline: each size
    against healthy runs of the same system, degraded or within their run-to-run noise."""
    if baseline:
        if time is not None or size is not None or model_from or peak or plot or html or hardware.given:
            raise UsageError(
                "--baseline judges logs against logs: --size/--time, --peak, --model-from, --plot, --html "
                "and the hardware options are for the judgement against the hardware"
            )
        report = api.diagnose_baseline(
            BaselineSpec(
                logs=LogSpec(paths=logs, collective=collective, ranks=ranks, max_bytes=max_bytes),
                baseline=baseline,
                threshold=threshold,
            )
        )
        print_json(report.to_json()) if as_json else render_logs.print_baseline(report)
        return
    if time is not None or size is not None:
        if time is None or size is None or len(logs) != 1 or model_from or plot or html:
            raise UsageError(
                "one measurement takes a collective, --size and --time (and --ranks with --cluster "
                "or --gpu), e.g. collperf diagnose allreduce --size 1GB --time 500ms --ranks 16 "
                "--cluster dgx-h100 --nodes 2; --model-from, --plot and --html are for logs"
            )
        judged = api.diagnose_measurement(
            MeasurementSpec(collective=logs[0], size=size, time=time, ranks=ranks, hardware=hardware, peak=peak)
        )
        print_json(judged.to_json()) if as_json else render_logs.print_judgement(judged)
        return
    output_path(plot, "--plot")
    with progress("reading logs", as_json, total=len(logs)) as steps:
        logs_spec = LogSpec(paths=logs, collective=collective, ranks=ranks, max_bytes=max_bytes)
        diagnoses = api.diagnose_logs(
            DiagnoseSpec(logs=logs_spec, peak=peak, model_from=model_from, hardware=hardware),
            on_log=_counted(steps, "read"),
            on_table=_counted(steps, "judged"),
        )
    paths = render.plot_diagnoses(diagnoses, plot) if plot else []
    if html:
        paths.append(str(api.report(diagnoses, html, command_line())))
    if as_json:
        print_json(diagnoses.to_json())
        return
    for d in diagnoses:
        render_logs.print_diagnosis(d)
    if diagnoses.comparison:
        render_logs.print_comparison(diagnoses, diagnoses.comparison)
    render_logs.print_not_judged(diagnoses.not_judged, "judged")
    for report in diagnoses.inputs:
        render_inputs.print_input(report)
    for path in paths:
        out.print(f"{'report' if path.endswith('.html') else 'plot'} written to {path}")
