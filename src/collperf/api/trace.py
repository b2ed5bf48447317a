"""Profiler traces: judge the collectives of a training step (trace)."""

from __future__ import annotations

from dataclasses import fields

from collperf.spec import HardwareSpec, TraceSpec
from collperf.trace.core import analyse


def trace(spec: TraceSpec | list | str, on_progress=None, **options):
    """`collperf trace`: Kineto traces (one file per rank; files, directories or globs, .json or .json.gz) ->
    a TraceReport: a verdict per (process group, collective, size) with NCCL's choice check, the step view
    (computation, communication, exposed communication), the straggler across ranks and the what-if.
    Give a TraceSpec, or paths with its fields as keywords (hardware values may be given flat: cluster=,
    nodes=, gpu=, ...; what_if_cluster=, what_if_nodes=, algorithm=; jobs=, engine= for how the rank files
    are read). `on_progress` is called with a trace.fanout.Progress (files and bytes done) after each file."""
    if not isinstance(spec, TraceSpec):
        hw = {k: options.pop(k) for k in [f.name for f in fields(HardwareSpec)] if k in options}
        spec = TraceSpec(paths=spec, hardware=options.pop("hardware", None) or HardwareSpec(**hw), **options)
    return analyse(spec, on_progress)
