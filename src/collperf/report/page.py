"""The report as one HTML page: inline CSS and SVG, no script, nothing fetched.

Every string that came from a log or a JSON file passes through `e()` (html.escape) on its way into
the page: logs are untrusted input, and a host name or a skipped line may hold markup.
"""

from __future__ import annotations

import html
import time

from collperf import units
from collperf.report import svg
from collperf.report.view import DiagnosisView, ValidationView

CSS = """
:root { --fg:#1d1f23; --muted:#5b616b; --line:#d9dce1; --bg:#ffffff; --panel:#f6f7f9;
        --good:#1a7f37; --ok:#9a6700; --bad:#cf222e; --neutral:#57606a; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
       font: 15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1120px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 19px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 16px; margin: 22px 0 6px; }
p.sub, .muted { color: var(--muted); }
code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, "DejaVu Sans Mono", monospace;
               font-size: 13px; }
.tiles { display: grid; grid-template-columns: repeat(auto-fit, minmax(200px, 1fr)); gap: 10px; margin: 14px 0; }
.tile { background: var(--panel); border: 1px solid var(--line); border-radius: 8px; padding: 10px 14px; }
.tile .k { font-size: 12px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.tile .v { font-size: 22px; font-weight: 650; }
.tile .d { font-size: 13px; color: var(--muted); }
.tile.verdict { border-left: 6px solid var(--neutral); }
.tile.verdict.good { border-left-color: var(--good); } .tile.verdict.ok { border-left-color: var(--ok); }
.tile.verdict.bad { border-left-color: var(--bad); }
.good .v, td.good b { color: var(--good); } .ok .v, td.ok b { color: var(--ok); }
.bad .v, td.bad b { color: var(--bad); }
dl.system { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; font-size: 14px; }
dl.system dt { color: var(--muted); } dl.system dd { margin: 0; overflow-wrap: anywhere; }
.plots { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
@media (max-width: 900px) { .plots { grid-template-columns: 1fr; } }
svg.plot { width: 100%; height: auto; display: block; border: 1px solid var(--line); border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 6px 0 10px; }
th, td { padding: 3px 8px; border-bottom: 1px solid var(--line); text-align: right; vertical-align: top; }
th { background: var(--panel); font-weight: 600; position: sticky; top: 0; }
td.l, th.l { text-align: left; }
.why { color: var(--muted); font-size: 12px; text-align: left; max-width: 380px; }
ul.findings { list-style: none; padding: 0; margin: 6px 0; }
ul.findings li { border: 1px solid var(--line); border-left: 5px solid var(--neutral); border-radius: 6px;
                 padding: 8px 12px; margin: 6px 0; }
ul.findings li.error { border-left-color: var(--bad); } ul.findings li.warning { border-left-color: var(--ok); }
ul.findings li.info { border-left-color: #0969da; }
.badge { display: inline-block; font-size: 11px; font-weight: 700; text-transform: uppercase; padding: 1px 7px;
         border-radius: 10px; color: #fff; background: var(--neutral); margin-right: 6px; }
.badge.error { background: var(--bad); } .badge.warning { background: var(--ok); } .badge.info { background: #0969da; }
.explain { color: var(--muted); font-size: 13px; }
footer { margin-top: 36px; padding-top: 10px; border-top: 1px solid var(--line); color: var(--muted); font-size: 13px; }
footer code { display: block; white-space: pre-wrap; overflow-wrap: anywhere; background: var(--panel);
              padding: 8px 10px; border-radius: 6px; color: var(--fg); margin: 4px 0; }
@page { size: A4; margin: 12mm; }
@media print {
  body { font-size: 10pt; } main { max-width: none; padding: 0; }
  * { -webkit-print-color-adjust: exact; print-color-adjust: exact; }
  .plots { grid-template-columns: 1fr 1fr; }
  th { position: static; } thead { display: table-header-group; }
  tr, .tile, ul.findings li, svg.plot { break-inside: avoid; }
  h2 { break-after: avoid; } section.input { break-before: page; }
  section.input:first-of-type { break-before: auto; }
}
"""


def e(value) -> str:
    """Escaped text: the only way a string reaches the page."""
    return html.escape(str(value), quote=True)


def _time(t) -> str:
    return units.format_time(t) if t else "-"


def _gb(value) -> str:
    return f"{value:.2f}" if value is not None else "-"


def _pct(value) -> str:
    return f"{100 * value:.0f} %" if value is not None else "-"


def _tile(key: str, value: str, detail: str = "", cls: str = "") -> str:
    return (
        f'<div class="tile {cls}"><div class="k">{e(key)}</div><div class="v">{e(value)}</div>'
        + (f'<div class="d">{e(detail)}</div>' if detail else "")
        + "</div>"
    )


def _where(v: DiagnosisView) -> str:
    where = f"{v.ranks} ranks" if v.ranks else "ranks unknown"
    return where + (f" on {v.nodes} node(s)" if v.nodes else "")


def summary_tiles(v: DiagnosisView) -> str:
    peak = f"{v.measured_peak_GBps:.2f} GB/s" if v.measured_peak_GBps is not None else "-"
    at = f"at {units.format_size(v.measured_peak_size)}" if v.measured_peak_size else ""
    bound = f"{v.peak_GBps:.1f} GB/s" if v.peak_GBps else "none"
    expected = f"{v.expected_GBps:.1f} GB/s" if v.expected_GBps else "none"
    expected_at = f"at {units.format_size(v.expected_at)}: " if v.expected_at else ""
    # the verdict compares each time with the expected model; the bound only says how much headroom is left
    tiles = [
        _tile("verdict", v.verdict, v.verdict_detail, f"verdict {v.tone}"),
        _tile("peak busbw (measured)", peak, at),
        _tile("expected busbw (verdict)", expected, expected_at + (v.expected_source or "no expected model")),
        _tile("lower-bound busbw (headroom)", bound, v.peak_source),
        _tile(
            "n\u00bd",
            units.format_size(round(v.n_half_bytes)) if v.n_half_bytes else "-",
            "the size that reaches half the peak busbw",
        ),
    ]
    return '<div class="tiles">' + "".join(tiles) + "</div>"


def system_list(v: DiagnosisView) -> str:
    items = [
        ("source", v.source),
        ("collective", v.collective or "unknown"),
        ("ranks", _where(v)),
        *v.system,
        ("bound", v.peak_source),
    ]
    if v.fit_r2 is not None:
        items.append(
            (
                "fit",
                f"R\u00b2 {v.fit_r2:.4f} on log time, median row error "
                + (f"{100 * v.fit_median_error:.1f} %" if v.fit_median_error is not None else "-"),
            )
        )
    return '<dl class="system">' + "".join(f"<dt>{e(k)}</dt><dd>{e(val)}</dd>" for k, val in items) + "</dl>"


def regimes_table(v: DiagnosisView) -> str:
    head = (
        "<tr><th>regime</th><th>from</th><th>to</th><th>rows</th><th>\u03b1 (latency)</th><th>bus bandwidth B</th></tr>"
    )
    body = "".join(
        f"<tr><td>R{k + 1}</td><td>{e(units.format_size(r.from_bytes))}</td><td>{e(units.format_size(r.to_bytes))}</td>"
        f"<td>{r.rows}</td><td>{e(_time(r.latency_s))}</td>"
        f"<td>{'-' if r.busbw_GBps is None else e(f'{r.busbw_GBps:.2f} GB/s')}</td></tr>"
        for k, r in enumerate(v.regimes)
    )
    return (
        f'<h3>Fitted regimes</h3><p class="explain">t = \u03b1 + size \u00d7 {v.busbw_factor:.4g} / B per '
        f"regime (busbw factor {v.busbw_factor:.4g}), fitted piecewise where the curve bends.</p>"
        f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"
    )


def sizes_table(v: DiagnosisView) -> str:
    columns = ["size", "time", "fitted", "expected", "bound", "busbw GB/s", "of bound", "regime"]
    head = "".join(f"<th>{c}</th>" for c in columns) + '<th class="l">verdict</th>'
    body = []
    for r in v.rows:
        cells = [
            units.format_size(r.size),
            _time(r.time_s),
            _time(r.fitted_s),
            _time(r.expected_s),
            _time(r.bound_s),
            _gb(r.busbw_GBps),
            _pct(r.efficiency),
            r.regime,
        ]
        why = f'<div class="why">{e(r.verdict_detail)}</div>' if r.verdict_detail else ""
        verdict = f"<b>{e(r.verdict)}</b>{why}"
        body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + f'<td class="l {r.tone}">{verdict}</td></tr>')
    return (
        '<h3>Per size</h3><p class="explain">expected: NCCL\'s time (its own algorithm/protocol choice) on '
        "the system assumed; bound: the lower bound no algorithm beats there; of bound: (bound + its latency) / measured "
        "time (at most 100 %); regime: latency- or bandwidth-bound from the expected choice's own terms.</p>"
        f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def findings_list(v: DiagnosisView) -> str:
    if not v.findings:
        return "<h3>Findings</h3><p>No anomalies found.</p>"
    items = []
    for f in v.findings:
        sizes = (
            (
                f'<div class="explain">sizes: {e(", ".join(units.format_size(s) for s in f.sizes[:12]))}'
                + (" ..." if len(f.sizes) > 12 else "")
                + "</div>"
            )
            if f.sizes
            else ""
        )
        explain = f'<div class="explain">what this checks: {e(f.explanation)}</div>' if f.explanation else ""
        items.append(
            f'<li class="{e(f.severity)}"><span class="badge {e(f.severity)}">{e(f.severity)}</span>'
            f"<b>{e(f.kind)}</b>: {e(f.message)}{explain}{sizes}</li>"
        )
    return f'<h3>Findings</h3><ul class="findings">{"".join(items)}</ul>'


def notes_list(v: DiagnosisView) -> str:
    if not v.notes:
        return ""
    return "<h3>Notes from reading the log</h3><ul>" + "".join(f"<li>{e(n)}</li>" for n in v.notes) + "</ul>"


def diagnosis_section(v: DiagnosisView, index: int, many: bool) -> str:
    title = (f"[{index}] " if many else "") + f"{v.collective or 'collective unknown'}, {_where(v)}: {v.name}"
    plots = f'<div class="plots">{svg.busbw_plot([v], f"p{index}b")}{svg.time_plot([v], f"p{index}t")}</div>'
    return (
        f'<section class="input" id="input-{index}"><h2>{e(title)}</h2>{summary_tiles(v)}{system_list(v)}'
        f"{plots}{findings_list(v)}{regimes_table(v)}{sizes_table(v)}{notes_list(v)}</section>"
    )


def overview(views: list[DiagnosisView]) -> str:
    """One line per input, for a report of several."""
    head = (
        '<tr><th>#</th><th class="l">source</th><th class="l">collective</th><th class="l">ranks</th>'
        '<th>peak busbw</th><th>n\u00bd</th><th class="l">verdict</th></tr>'
    )
    body = "".join(
        f'<tr><td>[{i}]</td><td class="l"><a href="#input-{i}">{e(v.name)}</a></td>'
        f'<td class="l">{e(v.collective)}</td>'
        f'<td class="l">{e(_where(v))}</td><td>{e(_gb(v.measured_peak_GBps))} GB/s</td>'
        f"<td>{e(units.format_size(round(v.n_half_bytes)) if v.n_half_bytes else '-')}</td>"
        f'<td class="l {v.tone}"><b>{e(v.verdict)}</b></td></tr>'
        for i, v in enumerate(views)
    )
    return f"<table><thead>{head}</thead><tbody>{body}</tbody></table>"


def comparison_section(views: list[DiagnosisView], rows: list[dict]) -> str:
    plots = f'<div class="plots">{svg.busbw_plot(views, "cmpb")}{svg.time_plot(views, "cmpt")}</div>'
    head = "<th>size</th>" + "".join(
        f"<th>time [{i}]</th><th>busbw [{i}]</th>" + (f"<th>ratio [{i}]</th>" if i else "") for i in range(len(views))
    )
    body = []
    for r in rows:
        cells = [units.format_size(r["size_bytes"])]
        for i in range(len(views)):
            cells += [_time(r.get(f"time_s_{i}")), _gb(r.get(f"busbw_GBps_{i}"))]
            if i:
                ratio = r.get(f"ratio_{i}")
                cells.append(f"{ratio:.2f}" if ratio else "-")
        body.append("<tr>" + "".join(f"<td>{e(c)}</td>" for c in cells) + "</tr>")
    return (
        '<h2>Side by side</h2><p class="explain">ratio: time / time of [0].</p>'
        + plots
        + f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
    )


def validation_section(v: ValidationView, index: int) -> str:
    tiles = (
        '<div class="tiles">'
        + _tile(
            "verdict",
            v.verdict,
            "median |predicted - measured| / measured " + _pct(v.median_abs_error),
            f"verdict {v.tone}",
        )
        + _tile("rows measured", str(len(v.rows)))
        + "</div>"
    )
    networks = "<ul>" + "".join(f"<li>{e(n)}</li>" for n in v.networks) + "</ul>"
    keys = sorted({(r["collective"], r["algorithm"]) for r in v.rows})
    legend = ", ".join(f"[{i}] {c} {a}" for i, (c, a) in enumerate(keys))
    head = (
        '<tr><th class="l">collective</th><th class="l">algorithm</th><th>ranks</th><th class="l">regime</th>'
        "<th>rows</th><th>median |error|</th><th>worst error</th><th>worst at</th></tr>"
    )
    body = "".join(
        f'<tr><td class="l">{e(s.get("collective", ""))}</td><td class="l">{e(s.get("algorithm", ""))}</td>'
        f'<td>{e(s.get("ranks", ""))}</td><td class="l">{e(s.get("regime", ""))}</td><td>{e(s.get("rows", ""))}</td>'
        f"<td>{e(_signed(s.get('median_abs_error'), False))}</td>"
        f"<td>{e(_signed(s.get('worst_signed_error'), True))}</td>"
        f"<td>{e(_size(s.get('worst_size')))}</td></tr>"
        for s in v.summary
    )
    return (
        f'<section class="input" id="validation-{index}"><h2>Validation: the model against measurements</h2>'
        f'{tiles}<p>validated on:</p>{networks}<div class="plots">{svg.validation_plot(v, f"v{index}")}'
        f'<p class="explain">lines: {e(legend)}</p></div>'
        f"<table><thead>{head}</thead><tbody>{body}</tbody></table></section>"
    )


def _signed(value, signed: bool) -> str:
    try:
        return f"{100 * float(value):{'+' if signed else ''}.1f} %"
    except (TypeError, ValueError):
        return "-"


def _size(value) -> str:
    try:
        return units.format_size(int(value))
    except (TypeError, ValueError):
        return "-"


def render(
    diagnoses: list[DiagnosisView],
    validations: list[ValidationView],
    comparison: list[dict] | None,
    command: str,
    version: str,
    title: str | None = None,
    traces: list[str] = (),
    inputs: list[str] = (),
    input_names: list[tuple[str, str]] = (),
) -> str:
    """The whole page; `traces`: the HTML sections of trace reports (report/trace_page.py); `inputs`: those of
    system inputs (report/input_page.py: an overview first where there are several), `input_names` their
    (kind, source), one per input."""
    many = len(diagnoses) + len(validations) + len(traces) + len(input_names) > 1
    if title is None:
        title = "collperf report: " + (
            f"{diagnoses[0].collective}, {_where(diagnoses[0])}"
            if len(diagnoses) == 1
            else f"{len(diagnoses)} logs"
            if diagnoses
            else "validation"
            if validations
            else "training step"
            if traces
            else f"{input_names[0][0]} {input_names[0][1].rsplit('/', 1)[-1]}"
            if len(input_names) == 1
            else f"{len(input_names)} system inputs"
        )
    parts = [
        f"<h1>{e(title)}</h1>",
        f'<p class="sub">collperf {e(version)} \u00b7 {e(time.strftime("%Y-%m-%d %H:%M"))}</p>',
    ]
    if len(diagnoses) > 1:
        parts.append("<h2>Summary</h2>" + overview(diagnoses))
    if comparison:
        parts.append(comparison_section(diagnoses, comparison))
    parts += [diagnosis_section(v, i, many) for i, v in enumerate(diagnoses)]
    parts += [validation_section(v, i) for i, v in enumerate(validations)]
    parts += list(traces)
    parts += list(inputs)
    parts.append(
        f"<footer>Made by collperf {e(version)} with:<code>{e(command)}</code>"
        "Times: seconds in SI prefixes; sizes: binary (KiB, MiB) as nccl-tests; GB/s = 10\u2079 bytes/s; "
        "busbw as nccl-tests defines it.</footer>"
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{e(title)}</title><style>{CSS}</style></head><body><main>" + "".join(parts) + "</main></body></html>\n"
    )
