"""`collperf report`: one self-contained HTML page (inline CSS and SVG, no script, nothing fetched) with
the verdict, the plots, the fitted regimes, the per-size table and the findings of one or more logs, or
of a validation.

    trace_page.py  the section of a profiler trace (step timeline coloured by verdict)
    input_page.py  the section of a system input (NCCL debug log, topology dump, link test): system, NCCL's
                   choices, link verdicts, the check-first list
    view.py   reads Diagnosis / validation objects into plain views (the one place that knows their fields)
    svg.py    the plots, matplotlib into in-memory SVG
    page.py   the HTML; every string from a log is escaped there

The API (`collperf.api.report`) reads and diagnoses the inputs; `render_page` only lays them out.
"""

from __future__ import annotations

import glob
import gzip
import json
import zlib
from pathlib import Path

from collperf import __version__, ingest
from collperf.errors import UsageError
from collperf.lab.results import to_json
from collperf.report import input_page, page, trace_page, view

VALIDATION_KEYS = {"networks", "summary", "rows"}


def is_validation(doc) -> bool:
    """`collperf validate --json`'s document (or an api.Validation)."""
    if isinstance(doc, dict):
        return VALIDATION_KEYS <= set(doc)
    return all(hasattr(doc, k) for k in VALIDATION_KEYS) and not hasattr(doc, "sizes")


def is_diagnosis(obj) -> bool:
    return hasattr(obj, "sizes") and hasattr(obj, "findings") and hasattr(obj, "table")


def read_validation(path) -> dict | None:
    """The validation document in `path`, or None when the file is something else (a log for ingest)."""
    try:
        with open(path, "rb") as f:
            start = f.read(64).lstrip()
        if not start.startswith(b"{"):
            return None
        doc = json.loads(Path(path).read_text(errors="replace"))
    except (OSError, ValueError, RecursionError):
        return None  # ingest reads it next and says what is wrong with it
    if not is_validation(doc):
        return None
    if not all(isinstance(doc[k], list) for k in VALIDATION_KEYS):
        raise UsageError(
            f"{path}: a validation document needs lists under 'networks', 'summary' and 'rows' "
            "(collperf validate --json writes them)"
        )
    return doc


def results_tables(results, source: str = "collperf bench") -> list:
    """A bench's Results read back through ingest, as its JSON file would be."""
    return ingest.parse(json.dumps(to_json(results)), source)


def render_page(
    diagnoses=(), validations=(), comparison=None, command: str = "", title: str | None = None, traces=(), inputs=()
) -> str:
    """The HTML page for Diagnosis objects, validations (api.Validation or its JSON document), trace
    reports (collperf.trace.TraceReport) and system inputs (diagnose.inputs.InputReport: an NCCL debug log, a
    topology or graph dump, a link test)."""
    if not diagnoses and not validations and not traces and not inputs:
        raise UsageError(
            "nothing to report: give at least one log, bench JSON, validate JSON, profiler trace, NCCL "
            "debug log, topology dump or link test"
        )
    return page.render(
        [view.diagnosis_view(d) for d in diagnoses],
        [view.validation_view(v) for v in validations],
        comparison,
        command,
        __version__,
        title,
        [trace_page.trace_section(t) for t in traces],
        ([input_page.overview(inputs)] if len(inputs) > 1 else [])
        + [input_page.input_section(r, i) for i, r in enumerate(inputs)],
        [(r.kind, r.source) for r in inputs],
    )


def is_input_report(item) -> bool:
    """What diagnose makes of an input that describes a system (diagnose.inputs.InputReport)."""
    return all(hasattr(item, k) for k in ("check_first", "chose", "links", "facts"))


def is_trace(item) -> bool:
    """A profiler trace (a TraceReport, a Kineto JSON file, or a directory or glob of them)."""
    if hasattr(item, "collectives") and hasattr(item, "steps"):
        return True
    text = str(item)
    paths = [Path(p) for p in glob.glob(text)] if any(c in text for c in "*?[") else [Path(text)]
    if len(paths) == 1 and paths[0].is_dir():
        paths = [p for p in paths[0].iterdir() if p.name.endswith((".json", ".json.gz"))]
    if not paths:
        return False
    try:
        opener = gzip.open if paths[0].name.endswith(".gz") else open
        with opener(paths[0], "rb") as f:
            start = f.read(4096)
    except (OSError, EOFError):
        return False
    except zlib.error:  # a gzip stream corrupt past its header: the trace reader names it as such
        return True
    return b'"traceEvents"' in start or b'"schemaVersion"' in start or b'"distributedInfo"' in start


def write_page(text: str, output) -> Path:
    path = Path(output)
    if path.suffix.lower() not in (".html", ".htm"):
        raise UsageError(f"report file {str(output)!r}: expected a name ending in .html")
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as e:
        raise UsageError(f"cannot write the report to {str(output)!r}: {e.strerror or e}") from None
    return path
