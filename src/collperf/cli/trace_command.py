"""`collperf trace`: judge the collectives of a training step from PyTorch profiler traces."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render_trace
from collperf.cli.options import Json, command, field_option, hardware_options
from collperf.cli.progress import progress
from collperf.cli.render import out, print_json
from collperf.cli.report_command import Html, command_line
from collperf.spec import HardwareSpec, TraceSpec

_WHAT_IF = "What-if"
_READING = "Reading (big jobs)"


@command("trace")
@hardware_options()
def trace_command(
    traces: list[str] = typer.Argument(
        ...,
        help="Kineto traces from torch.profiler (.json or .json.gz), one file per rank: files, a directory or a glob.",
    ),
    what_if_cluster: Optional[str] = field_option(TraceSpec, "what_if_cluster", _WHAT_IF),
    what_if_nodes: Optional[int] = field_option(TraceSpec, "what_if_nodes", _WHAT_IF),
    algorithm: Optional[str] = field_option(TraceSpec, "algorithm", _WHAT_IF),
    peak: Optional[str] = field_option(TraceSpec, "peak"),
    jobs: Optional[int] = field_option(TraceSpec, "jobs", _READING),
    engine: Optional[str] = field_option(TraceSpec, "engine", _READING),
    as_json: bool = Json,
    html: Optional[str] = Html,
    hardware: HardwareSpec = None,
):
    """Judge a training step from its traces: a verdict per collective (expected band, bound, NCCL's algorithm
    and protocol choice), exposed communication per step, the straggler rank, and what-if on another system."""
    spec = TraceSpec(
        paths=traces,
        hardware=hardware,
        what_if_cluster=what_if_cluster,
        what_if_nodes=what_if_nodes,
        algorithm=algorithm,
        peak=peak,
        jobs=jobs,
        engine=engine,
    )
    with progress("reading traces", as_json) as steps:  # by files and MB, on a terminal only
        report = api.trace(
            spec,
            on_progress=lambda p: steps.done(
                p.bytes_done >> 20, max(1, p.bytes >> 20), f"reading traces: {p.files_done}/{p.files} files, MB"
            ),
        )
    path = api.report(report, html, command_line()) if html else None
    if as_json:
        print_json(report.to_json())
    else:
        render_trace.print_trace(report)
    if path is not None and not as_json:
        out.print(f"report written to {path}")
