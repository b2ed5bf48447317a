"""Logs: reading benchmark logs (read_logs), fitting them (fit_tables, fit_logs), judging them against
the hardware (diagnose_logs, diagnose_measurement, predict_nccl), comparing them (compare_logs) and
shareable HTML reports of them (report)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, fields, replace
from pathlib import Path

from collperf import ingest, report as pages
from collperf.api.common import as_spec
from collperf.api.results import NcclChoice, one_or_many
from collperf.api.runs import Validation
from collperf.api.trace import trace
from collperf.diagnose import Diagnosis, diagnose, diagnose_measurement as judge
from collperf.diagnose import baseline as against
from collperf.expect.expectation import model_note
from collperf.expect.resolve import assume
from collperf.diagnose.inputs import InputReport
from collperf.diagnose.system_inputs import judge_input
from collperf.errors import UsageError
from collperf.fit import fit
from collperf.ingest.table import Table
from collperf.model.nccl import expect
from collperf.spec import (
    BaselineSpec,
    DiagnoseSpec,
    HardwareSpec,
    LogSpec,
    MeasurementSpec,
    NcclPredictSpec,
    ReportSpec,
    TraceSpec,
)


def read_logs(
    spec: LogSpec | list | str,
    collective: str | None = None,
    ranks: int | None = None,
    on_log=None,
    others: list | None = None,
) -> list:
    """Every table of every log (nccl-tests text or JSON, collperf JSON/CSV, OSU, IMB); on_log(done, total,
    path) hears of each log as it is read. Give a LogSpec, or (the convenience) the paths with the collective
    and rank count. An input that holds no table (an NCCL debug log, a topology, a link test: ingest.OtherInput) is
    an error, unless `others` is a list: then what it was read as is appended there."""
    spec = as_spec(LogSpec, spec, {}, paths=spec, collective=collective, ranks=ranks)
    tables = []
    for i, p in enumerate(spec.paths):
        try:
            tables += ingest.load(p, spec.collective, spec.ranks, spec.max_log_bytes)
        except ingest.OtherInput as e:
            if others is None:
                raise
            others.append(e.value)
        if on_log is not None:
            on_log(i + 1, len(spec.paths), p)
    return tables


@dataclass
class Unjudged:
    """A table that could not be fitted or judged, and why (the others of its logs still are)."""

    table: Table
    why: str

    def to_json(self) -> dict:
        return {"source": self.table.source, "collective": self.table.collective, "not_judged": self.why}


class Judged(list):
    """The fits or diagnoses of the tables that could be judged, in order; `not_judged` lists the others
    (Unjudged: the table and why). One unfittable table does not take the rest down with it."""

    def __init__(self, items=(), not_judged=None):
        super().__init__(items)
        self.not_judged: list[Unjudged] = list(not_judged or [])
        self.comparison: list[dict] | None = None  # diagnose: logs of one collective side by side (compare_logs)
        self.inputs: list = []  # diagnose: the inputs that hold no table, judged (diagnose/inputs.InputReport)

    def to_json(self):
        """Each judged table's document, then each unjudged one's, then each system input's; with a comparison, all
        under their names."""
        docs = [d.to_json() for d in self] + [u.to_json() for u in self.not_judged] + [r.to_json() for r in self.inputs]
        return {"diagnoses": docs, "comparison": self.comparison} if self.comparison else one_or_many(docs)


def _each(tables, judge, on_table=None) -> Judged:
    """judge(table) for every table, a user-facing refusal (UsageError) kept as Unjudged; raises only
    when no table at all can be judged (with each table's reason). on_table(done, total) hears of each."""
    out = Judged()
    for i, t in enumerate(tables):
        try:
            result = judge(t)
        except UsageError as e:
            out.not_judged.append(Unjudged(t, str(e)))
            continue
        finally:
            if on_table is not None:
                on_table(i + 1, len(tables))
        result.table = t
        out.append(result)
    if not out and out.not_judged:
        if len(out.not_judged) == 1:
            raise UsageError(out.not_judged[0].why)
        raise UsageError(
            f"none of the {len(out.not_judged)} tables can be judged: "
            + "; ".join(u.why for u in out.not_judged[:5])
            + (" ..." if len(out.not_judged) > 5 else "")
        )
    return out


def fit_tables(tables, on_table=None) -> Judged:
    """A piecewise alpha-beta fit per table (each keeps its table: `fit.table`); a table that cannot be
    fitted is listed in the result's `not_judged` instead (UsageError only when none can); on_table(done,
    total) hears of each as it is fitted."""
    return _each(tables, fit, on_table)


def fit_logs(spec: LogSpec | list | str, collective: str | None = None, ranks: int | None = None) -> Judged:
    """`collperf fit`: a piecewise alpha-beta fit per table (each fit keeps its table: `fit.table`). Give a
    LogSpec, or (the convenience) the paths with the collective and rank count."""
    return fit_tables(read_logs(spec, collective, ranks))


def diagnose_logs(spec: DiagnoseSpec | list | str, on_log=None, on_table=None, **options) -> Judged:
    """`collperf diagnose`: verdicts and findings per table. Give a DiagnoseSpec, or paths with the
    DiagnoseSpec fields as keywords (peak, network, hardware, model_from) and collective/ranks for the logs.
    Each row is judged against NCCL's expected time on the system assumed from the log (the hardware
    options override it) and against the physical bound (the system's two-level bound, or --peak). A table
    that cannot be judged is listed in the result's `not_judged` with why (UsageError only when none can).
    Several tables of one collective are also compared side by side (the result's `comparison`)."""
    if not isinstance(spec, DiagnoseSpec):
        logs = LogSpec(paths=spec, collective=options.pop("collective", None), ranks=options.pop("ranks", None))
        spec = DiagnoseSpec(logs=logs, **options)
    model = read_logs(spec.model_from)[0] if spec.model_from is not None else None
    others: list = []
    tables = read_logs(spec.logs, on_log=on_log, others=others)
    _number_runs(tables)
    judged = _each(tables, lambda t: diagnose(t, spec.peak_Bps, spec.hardware, model), on_table)
    judged.inputs = [judge_input(value, spec.hardware) for value in others]
    if len(judged) > 1 and len({d.table.collective for d in judged}) == 1:  # one collective: side by side
        judged.comparison = compare_logs(judged)
    return judged


def diagnose_input(path, hardware: HardwareSpec | None = None, max_bytes: str | int | None = None) -> InputReport:
    """One input that describes a system rather than a sweep: a standalone NCCL/RCCL debug log (NCCL_DEBUG=INFO),
    NCCL's topology or graph dump, `nvidia-smi topo -m`, or a link test (ib_write_bw/ib_read_bw, nvbandwidth,
    p2pBandwidthLatencyTest). Returns what the system is (the resolver's Assumed, with the hardware flags over it),
    what NCCL chose, per-link verdicts and the check-first list, each item with the line behind it."""
    others: list = []
    tables = read_logs(LogSpec(paths=[path], max_bytes=max_bytes), others=others)
    if not others:
        what = tables[0].describe() if tables else str(path)
        raise UsageError(f"{what}: a table of measurements, not a system input: use diagnose_logs (collperf diagnose)")
    return judge_input(others[0], hardware)


def diagnose_baseline(spec: BaselineSpec | list | str, baseline=None, **options) -> against.BaselineReport:
    """`collperf diagnose NEW --baseline GOOD`: each size of the new logs against the baseline's healthy runs of
    the same system (a log, several, or a directory of them), degraded where it is below them by more than the
    run-to-run noise the logs show (at least spec.threshold, 5 %). Give a BaselineSpec, or the new paths with
    baseline= (and threshold=, collective=, ranks=)."""
    if not isinstance(spec, BaselineSpec):
        logs = LogSpec(paths=spec, collective=options.pop("collective", None), ranks=options.pop("ranks", None))
        spec = BaselineSpec(logs=logs, baseline=baseline, **options)
    given = LogSpec(
        paths=_expand(spec.baseline),
        collective=spec.logs.collective,
        ranks=spec.logs.ranks,
        max_bytes=spec.logs.max_bytes,
    )
    return against.judge(read_logs(spec.logs), read_logs(given), spec.floor)


def _expand(paths: Iterable[str | os.PathLike[str]]) -> list[Path]:
    """A directory stands for the files in it (sorted; hidden ones skipped); a directory with none is refused."""
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
            if not files:
                raise UsageError(f"--baseline {p}: the directory holds no log file")
            out += files
        else:
            out.append(p)
    return out


def _number_runs(tables) -> None:
    """Several runs read from one file (a multi-run log): each table knows it is run k of n."""
    by_source: dict[str, list] = {}
    for t in tables:
        by_source.setdefault(t.source, []).append(t)
    for same in by_source.values():
        if len(same) > 1:
            for k, t in enumerate(same, 1):
                t.header["run"] = (k, len(same))


def diagnose_measurement(spec: MeasurementSpec | None = None, **options):
    """`collperf diagnose allreduce --size 1GB --time 500ms --ranks 16 --cluster dgx-h100 --nodes 2`: one
    measured number judged like a log row (expected, bound, verdict, causes). Give a MeasurementSpec or its
    fields as keywords (hardware values may be given flat: cluster=, nodes=, gpu=, ...)."""
    if spec is None:
        hw = {k: options.pop(k) for k in [f.name for f in fields(HardwareSpec)] if k in options}
        spec = MeasurementSpec(hardware=HardwareSpec(**hw), **options)
    return judge(spec)


def predict_nccl(spec: NcclPredictSpec | None = None, **options) -> NcclChoice:
    """`collperf predict --nccl`: NCCL's chosen algorithm/protocol, time and busbw, and the runner-up, per
    size on a catalogue system (spec.hardware.cluster, or .gpu) sized to spec.ranks/hardware.nodes. The
    result unpacks as (Assumed, NcclPrediction). Give an NcclPredictSpec, or its fields as keywords."""
    spec = as_spec(NcclPredictSpec, spec, options)
    assumed = assume(None, spec.hardware, spec.ranks)
    if assumed.system is None:
        raise UsageError(f"predict --nccl: {assumed.why_none}")
    return NcclChoice(assumed, expect(spec.collective, spec.sizes_bytes, assumed.system), model_note(spec.collective))


def compare_logs(diagnoses) -> list[dict]:
    """Side by side, per size, the tables of one collective: time and busbw of each, and the ratio to the first."""
    rows = []
    for size in sorted({s.size_bytes for d in diagnoses for s in d.sizes}):
        entry = {"size_bytes": size}
        for i, d in enumerate(diagnoses):
            match = next((s for s in d.sizes if s.size_bytes == size), None)
            entry[f"time_s_{i}"] = match.time_s if match else None
            entry[f"busbw_GBps_{i}"] = match.busbw_GBps if match else None
        first = entry["time_s_0"]
        for i in range(1, len(diagnoses)):
            t = entry[f"time_s_{i}"]
            entry[f"ratio_{i}"] = t / first if t and first else None
        rows.append(entry)
    return rows


def report(spec: ReportSpec | list, output=None, command: str | None = None, **options) -> Path:
    """`collperf report`: one self-contained HTML page at spec.output; returns its path. Each input is a log
    path (anything diagnose reads, a bench JSON included), a validate JSON path, a Diagnosis, a bench's
    Results, a Validation, a profiler trace (files, a directory or a glob: one file per rank, read together),
    a TraceReport, or an input that describes a system (an NCCL debug log, a topology or graph dump, nvidia-smi
    topo -m, a link test; or its diagnose.inputs.InputReport: system, NCCL's choices, link verdicts and the
    check-first list); several logs of one collective are compared side by side (ReportSpec). Give a
    ReportSpec, or (the convenience) the inputs, output and command with the other fields as keywords."""
    spec = as_spec(ReportSpec, spec, options, inputs=spec, output=output, command=command)
    items, output, command, network = spec.inputs, spec.output, spec.command, spec.network
    collective, ranks, peak, title = spec.collective, spec.ranks, spec.peak, spec.title
    # the network options read once as hardware: the spec is copied per log below (replace re-validates it)
    hardware = HardwareSpec.from_network(network) if network is not None else None
    judging = DiagnoseSpec(logs=LogSpec(paths=["-"], collective=collective, ranks=ranks), peak=peak, hardware=hardware)
    diagnoses, validations, traces, trace_paths, inputs = [], [], [], [], []
    for item in items:
        if isinstance(item, (str, Path)) and pages.is_trace(item):
            trace_paths.append(item)  # one file per rank: read together below
        elif pages.is_trace(item):
            traces.append(item)
        elif isinstance(item, InputReport) or pages.is_input_report(item):
            inputs.append(item)
        elif isinstance(item, Diagnosis) or pages.is_diagnosis(item):
            diagnoses.append(item)
        elif isinstance(item, Validation) or pages.is_validation(item):
            validations.append(item)
        elif hasattr(item, "rows") and hasattr(item, "config"):  # a bench's Results
            for t in pages.results_tables(item):
                diagnoses.append(diagnose(t, judging.peak_Bps, judging.hardware))
        elif (doc := pages.read_validation(item)) is not None:
            validations.append(doc)
        else:
            judged = diagnose_logs(replace(judging, logs=LogSpec(paths=[item], collective=collective, ranks=ranks)))
            diagnoses += judged
            inputs += judged.inputs  # an NCCL debug log, a topology dump, a link test: its own section
    same = len(diagnoses) > 1 and len({d.table.collective for d in diagnoses}) == 1
    if command is None:
        shown = [str(i) if isinstance(i, (str, Path)) else type(i).__name__ for i in items]
        command = f"collperf.api.report({shown!r}, {str(output)!r})"
    if trace_paths:
        traces.append(trace(TraceSpec(paths=trace_paths, hardware=hardware or HardwareSpec())))
    text = pages.render_page(
        diagnoses, validations, compare_logs(diagnoses) if same else None, command, title, traces, inputs
    )
    return pages.write_page(text, output)
