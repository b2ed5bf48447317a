"""The one place that reads diagnose's and validate's objects for the report: plain views with defaults.

Every field is read with a default (`_get`), so the report renders Diagnosis objects of today and of
tomorrow alike: when diagnose grows an expected time per row (`expected_s`), a verdict per table or a
bound of another kind, showing it is a change here, not in the page. Nothing here formats HTML.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from collperf import units
from collperf.diagnose.verdict import Kind, Verdict

# What each finding kind checks, in one line: the page shows it beside diagnose's own message
# (the message says what was found at which sizes; this says what the check looks at).
FINDING_KINDS = {
    "correctness": "nccl-tests counted wrong results (#wrong > 0 or 'Out of bounds values' FAILED).",
    "dip": "busbw falls below the level already reached at smaller sizes and then recovers.",
    "tail-drop": "busbw falls at the largest sizes and does not recover.",
    "non-monotonic": "a larger message finished faster than a smaller one.",
    "above-bound": "a size ran faster than the lower bound of the assumed hardware: the assumed system is wrong.",
    "slower-overall": "most bandwidth-bound sizes are above the band of healthy public runs (or, without a band, "
    "slower than NCCL's expected time): a warning when the largest are too, else where the slow "
    "part is.",
    "single-rank": "the table ran on one rank, where busbw is zero by definition.",
    "avg-busbw": "nccl-tests' 'Avg bus bandwidth' averages all sizes, latency-bound ones included.",
    "placement": "in-place and out-of-place times of one size disagree.",
    "convention": "the log uses an older nccl-tests bandwidth convention.",
    "latency-bound": "sizes where NCCL's chosen algorithm/protocol spends more in latency than in bandwidth.",
    "skipped-lines": "lines of the log that could not be read.",
    "inconsistent-rows": "rows whose time, algbw and busbw columns disagree with each other.",
    "bad-time": "rows without a finite positive time.",
    "no-busbw": "busbw needs the rank count, which the log does not give.",
    "outside-band": "the sizes slower or faster than the band of healthy public runs (10th-90th percentile).",
    "not-fitted": "a run with too few sizes for a fit of its own, judged against the expectation and bound alone.",
}

SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _get(obj, name: str, default=None):
    """A field of a dataclass-like object or a dict, or `default` when it is missing or None."""
    value = obj.get(name, default) if isinstance(obj, dict) else getattr(obj, name, default)
    return default if value is None else value


def _number(value) -> float | None:
    """A finite float, or None (NaN, inf, missing and non-numbers all read as 'not known')."""
    try:
        value = float(value)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


@dataclass
class RowView:
    size: int
    time_s: float | None
    fitted_s: float | None
    expected_s: float | None  # NCCL's expected time on the assumed system
    bound_s: float | None
    busbw_GBps: float | None
    efficiency: float | None
    regime: str
    verdict: str  # short label: as expected, slower than expected by X, above the bound, ...
    verdict_detail: str  # the rest of diagnose's verdict text (why, what to check)
    tone: str  # good, ok, bad, neutral: the colour of the verdict


@dataclass
class FindingView:
    severity: str
    kind: str
    message: str
    explanation: str
    sizes: list[int] = field(default_factory=list)


@dataclass
class RegimeView:
    from_bytes: int
    to_bytes: int
    latency_s: float | None
    busbw_GBps: float | None
    rows: int


@dataclass
class DiagnosisView:
    source: str
    name: str  # the file name of the source
    collective: str
    ranks: int | None
    nodes: int | None
    busbw_factor: float
    system: list[tuple[str, str]]  # (label, value) lines: GPUs, hosts, NCCL version, ...
    peak_GBps: float | None  # the lower bound's busbw: what no size can exceed
    peak_source: str
    expected_GBps: float | None  # the expected model's busbw at `expected_at`, the size the verdict reads
    expected_at: int | None
    expected_source: str
    measured_peak_GBps: float | None
    measured_peak_size: int | None
    n_half_bytes: float | None
    fit_r2: float | None
    fit_median_error: float | None
    regimes: list[RegimeView]
    rows: list[RowView]
    findings: list[FindingView]
    notes: list[str]
    verdict: str  # the overall verdict, short
    verdict_detail: str
    tone: str


def _split_verdict(text: str) -> tuple[str, str]:
    label, _, detail = str(text).partition(":")
    return label.strip(), detail.strip()


# the tone of each verdict kind (others: neutral)
TONES = {
    Kind.AS_EXPECTED: "good",
    Kind.SLOW_END: "good",
    Kind.FASTER: "good",
    Kind.FASTER_THAN_TYPICAL: "good",
    Kind.IMPLAUSIBLE: "good",
    Kind.ABOVE_BOUND: "ok",
    Kind.SLOWER: "bad",
    Kind.SLOWER_THAN_BOUND: "bad",
    Kind.ERROR: "bad",
}


def _tone(label) -> str:
    """A Verdict's tone by its kind; a text (another tool's object, an older document) by its first words."""
    if isinstance(label, Verdict):
        return TONES.get(label.kind, "neutral")
    for start, tone in (
        ("as expected", "good"),
        ("faster", "good"),
        ("excellent", "good"),
        ("typical", "ok"),
        ("above", "ok"),
        ("slower", "bad"),
        ("investigate", "bad"),
        ("error", "bad"),
    ):
        if label.startswith(start):
            return tone
    return "neutral"


def row_view(s) -> RowView:
    said = _get(s, "verdict", "")
    label, detail = _split_verdict(said)
    causes = [str(c) for c in _get(s, "causes", [])]
    if causes:  # diagnose's likely causes for a slower row
        detail = "; ".join([detail] * bool(detail) + ["likely: " + "; ".join(causes)])
    # diagnose's expected model: `expected_s` when it has one, the ideal model's time until then
    expected = _number(_get(s, "expected_s", _get(s, "ideal_s")))
    return RowView(
        int(_get(s, "size_bytes", 0)),
        _number(_get(s, "time_s")),
        _number(_get(s, "fitted_s")),
        expected,
        _number(_get(s, "bound_s")),
        _number(_get(s, "busbw_GBps")),
        _number(_get(s, "efficiency")),
        str(_get(s, "regime", "")),
        label,
        detail,
        _tone(said if isinstance(said, Verdict) else label),
    )


def _system(table, assumed=None) -> list[tuple[str, str]]:
    header = _get(table, "header", {})
    lines = []
    if assumed is not None:  # diagnose's system assumed, each value with where it came from
        lines.append(
            (
                "system assumed",
                str(assumed.describe() if hasattr(assumed, "describe") else _get(assumed, "description", "")),
            )
        )
        values = _get(assumed, "values", [])
        for v in values:
            label, value, source = (
                v
                if isinstance(v, (list, tuple))
                else (_get(v, "name", ""), _get(v, "value", ""), _get(v, "source", ""))
            )
            lines.append((str(label), f"{value} ({source})"))
    if header.get("gpus"):
        lines.append(("GPUs", ", ".join(map(str, header["gpus"]))))
    if header.get("hosts"):
        hosts = list(map(str, header["hosts"]))
        lines.append(("hosts", ", ".join(hosts[:8]) + (f" and {len(hosts) - 8} more" if len(hosts) > 8 else "")))
    if header.get("nccl_version"):
        lines.append(("NCCL", str(header["nccl_version"])))
    if header.get("flags"):
        lines.append(("run", str(header["flags"])))
    return lines


def overall_verdict(d, rows: list[RowView], findings: list[FindingView]) -> tuple[str, str, str]:
    """(label, detail, tone) for the whole table. diagnose's own overall verdict when it has one;
    otherwise an error finding wins, then the verdict at the largest bandwidth-bound size (where a
    collective reaches its bus bandwidth), then 'latency-bound' when no size is bandwidth-bound."""
    own = _get(d, "verdict")
    if isinstance(own, Verdict) or (isinstance(own, str) and own):
        label, detail = _split_verdict(own)
        return label, detail, _tone(own if isinstance(own, Verdict) else label)
    errors = [f for f in findings if f.severity == "error"]
    if errors:
        return "error", "; ".join(f.kind for f in errors) + ": see the findings", "bad"
    bandwidth = [r for r in rows if r.regime == "bandwidth"]
    if not rows:
        return "no data", "no usable rows", "neutral"
    if not bandwidth:
        return "latency-bound", "every size is latency-bound: the sweep never reaches the bandwidth regime", "neutral"
    top = bandwidth[-1]
    if top.efficiency is None:
        return ("not judged", "no peak to judge busbw against: pass --peak RATE or --cluster PRESET", "neutral")
    where = f"at {units.format_size(top.size)}, the largest bandwidth-bound size"
    detail = (
        f"{where}: {top.verdict_detail}" if top.verdict_detail else f"{100 * top.efficiency:.0f} % of the peak {where}"
    )
    return top.verdict, detail, top.tone


def _expected_busbw(rows: list[RowView], factor: float) -> tuple[int | None, float | None]:
    """(size, busbw) of the expected model where the verdict is read: the largest bandwidth-bound size
    with an expected time, else the largest size with one (busbw = size x factor / time, nccl-tests)."""
    timed = [r for r in rows if r.expected_s]
    top = ([r for r in timed if r.regime == "bandwidth"] or timed or [None])[-1]
    if top is None:
        return None, None
    return top.size, top.size * factor / top.expected_s / 1e9


def diagnosis_view(d) -> DiagnosisView:
    """A Diagnosis (collperf.diagnose) as the report shows it."""
    table, fitted = _get(d, "table"), _get(d, "fit")
    rows = [row_view(s) for s in _get(d, "sizes", [])]
    findings = [
        FindingView(
            str(_get(f, "severity", "info")),
            str(_get(f, "kind", "")),
            str(_get(f, "message", "")),
            FINDING_KINDS.get(str(_get(f, "kind", "")), ""),
            list(_get(f, "sizes_bytes", [])),
        )
        for f in _get(d, "findings", [])
    ]
    findings.sort(key=lambda f: SEVERITY_ORDER.get(f.severity, 3))
    regimes = [
        RegimeView(
            int(_get(r, "from_bytes", 0)),
            int(_get(r, "to_bytes", 0)),
            _number(_get(r, "latency_s")),
            _number(_get(r, "busbw_GBps")),
            int(_get(r, "rows", 0)),
        )
        for r in _get(fitted, "regimes", [])
    ]
    source = str(_get(table, "source", "<log>"))
    label, detail, tone = overall_verdict(d, rows, findings)
    factor = float(_get(fitted, "factor", 1.0))
    expected_at, expected_GBps = _expected_busbw(rows, factor)
    notes = list(map(str, _get(table, "notes", []))) + list(map(str, _get(fitted, "notes", [])))
    median = _get(fitted, "median_error")
    return DiagnosisView(
        source=source,
        name=Path(source).name or source,
        collective=str(_get(table, "collective", "")),
        ranks=_get(table, "ranks"),
        nodes=_get(table, "nodes"),
        busbw_factor=factor,
        system=_system(table, _get(d, "assumed", _get(d, "system"))),
        peak_GBps=_number(_get(d, "peak_GBps")),
        peak_source=str(_get(d, "peak_source", "")),
        expected_GBps=expected_GBps,
        expected_at=expected_at,
        expected_source=str(_get(d, "expected_from", "")),
        measured_peak_GBps=_number(_get(fitted, "peak_busbw_GBps")),
        measured_peak_size=_get(fitted, "peak_size_bytes"),
        n_half_bytes=_number(_get(fitted, "n_half_bytes")),
        fit_r2=_number(_get(fitted, "r2")),
        fit_median_error=_number(median),
        regimes=regimes,
        rows=rows,
        findings=findings,
        notes=notes,
        verdict=label,
        verdict_detail=detail,
        tone=tone,
    )


@dataclass
class ValidationView:
    networks: list[str]
    summary: list[dict]
    rows: list[dict]  # collective, algorithm, ranks, size, measured_s, predicted_s, regime, error
    median_abs_error: float | None
    verdict: str
    tone: str


def validation_view(v) -> ValidationView:
    """A validation (api.Validation or `collperf validate --json`'s document) as the report shows it."""
    rows = []
    for r in _get(v, "rows", []):
        measured, predicted = _number(_get(r, "measured_s")), _number(_get(r, "predicted_s"))
        error = _number(_get(r, "error"))
        if error is None and measured and predicted is not None:
            error = (predicted - measured) / measured
        rows.append(
            {
                "collective": str(_get(r, "collective", "")),
                "algorithm": str(_get(r, "algorithm", "")),
                "ranks": _get(r, "ranks"),
                "size": int(_get(r, "size", 0)),
                "measured_s": measured,
                "predicted_s": predicted,
                "regime": str(_get(r, "regime", "")),
                "error": error,
            }
        )
    errors = [abs(r["error"]) for r in rows if r["error"] is not None]
    median = statistics.median(errors) if errors else None
    if median is None:
        verdict, tone = "no rows", "neutral"
    else:
        # the report's own bands (not a published threshold): within 10 % median the model can pick
        # algorithms and sizes; beyond 30 % it cannot be trusted for that
        band = round(median, 9)  # 1.1e-3 vs 1e-3 is 10 %, not 10.000000000000009 %
        verdict = "model agrees" if band <= 0.1 else ("model roughly agrees" if band <= 0.3 else "model disagrees")
        tone = {"model agrees": "good", "model roughly agrees": "ok"}.get(verdict, "bad")
    return ValidationView(
        [str(n) for n in _get(v, "networks", [])],
        [dict(s) for s in _get(v, "summary", [])],
        rows,
        median,
        verdict,
        tone,
    )
