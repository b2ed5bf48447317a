"""The report's section for profiler traces: the step timeline per rank with each collective coloured by its
verdict, the collectives, the steps and the straggler. Hand-written SVG (rectangles), so a page stays
light however many calls a trace holds: the timeline shows at most `MAX_STEPS` steps."""

from __future__ import annotations

import math


from collperf import units
from collperf.report.page import _tile, e
from collperf.report.view import _tone
from collperf.trace.overlap import union

MAX_STEPS = 3
WIDTH, LANE, GAP, LEFT = 1060, 14, 10, 70
AXIS = 22  # the time axis' height under the lanes
AXIS_WORDS = "time from the first step's start (the first call's without steps)"
COLOURS = {"good": "#1a7f37", "ok": "#bf8700", "bad": "#cf222e", "neutral": "#8c959f"}
COMPUTE = "#b6c3d1"


def _t(value) -> str:
    return units.format_time(value) if value is not None else "-"


def _window(report) -> tuple[float, float, list]:
    """The time shown: the first steps of the lowest rank (every call when the trace has no steps)."""
    first = report.traces[0]
    steps = first.steps[:MAX_STEPS]
    if steps:
        return steps[0][1], steps[-1][2], steps
    starts = [c.start_s for t in report.traces for c in t.calls]
    ends = [c.end_s for t in report.traces for c in t.calls]
    return min(starts), max(ends), []


def ticks(span_s: float, most: int = 8) -> list[float]:
    """Round tick times from 0 over a span: a step of 1, 2 or 5 x 10^k seconds, at most `most` + 1 ticks."""
    if span_s <= 0:
        return [0.0]
    step = 10.0 ** math.floor(math.log10(span_s / most))
    step = next(step * m for m in (1, 2, 5, 10) if span_s / (step * m) <= most)
    return [k * step for k in range(int(span_s / step + 1e-9) + 1)]


def _axis(x, t0: float, span: float, top: float, bottom: float) -> str:
    """The time axis under the lanes: gridlines and labels, time since the window's start."""
    parts = [f'<line x1="{x(t0):.1f}" y1="{bottom}" x2="{x(t0 + span):.1f}" y2="{bottom}" stroke="#5b616b"/>']
    for t in ticks(span):
        at = x(t0 + t)
        parts.append(
            f'<line x1="{at:.1f}" y1="{top}" x2="{at:.1f}" y2="{bottom}" stroke="#d0d7de" '
            f'stroke-dasharray="2,3"/><line x1="{at:.1f}" y1="{bottom}" x2="{at:.1f}" y2="{bottom + 4}" '
            f'stroke="#5b616b"/><text x="{at:.1f}" y="{bottom + 15}" font-size="10" text-anchor="middle" '
            f'fill="#5b616b">{e(units.format_time(t) if t else "0")}</text>'
        )
    return "".join(parts)


def timeline(report) -> str:
    """Per rank, a computation lane and a communication lane; steps as alternating bands."""
    t0, t1, steps = _window(report)
    span = max(t1 - t0, 1e-12)
    scale = (WIDTH - LEFT - 10) / span
    tone = {
        (r.process_group, r.collective, r.size_bytes): (_tone(r.verdict), r.verdict.text) for r in report.collectives
    }
    rows = len(report.traces)
    lanes_end = 24 + rows * (2 * LANE + GAP)
    height = lanes_end + 22 + AXIS

    def x(t):
        return LEFT + (min(max(t, t0), t1) - t0) * scale

    parts = []
    for k, (name, s, end) in enumerate(steps):
        fill = "#f6f7f9" if k % 2 == 0 else "#eef1f4"
        parts.append(
            f'<rect x="{x(s):.1f}" y="18" width="{max(x(end) - x(s), 0.5):.1f}" '
            f'height="{lanes_end - 18}" fill="{fill}"><title>{e(name)}: {e(_t(end - s))}</title></rect>'
            f'<text x="{x(s) + 3:.1f}" y="14" font-size="11" fill="#5b616b">{e(name)}</text>'
        )
    parts.append(_axis(x, t0, span, 18, lanes_end))
    for i, trace in enumerate(report.traces):
        y = 24 + i * (2 * LANE + GAP)
        parts.append(f'<text x="4" y="{y + LANE + 4}" font-size="12">rank {trace.rank}</text>')
        busy = union(trace.compute[:, :2])
        busy = busy[(busy[:, 1] > t0) & (busy[:, 0] < t1)] if len(busy) else busy
        for a, b in busy:
            parts.append(
                f'<rect x="{x(a):.1f}" y="{y}" width="{max(x(b) - x(a), 0.5):.1f}" height="{LANE - 2}" '
                f'fill="{COMPUTE}"/>'
            )
        for c in trace.calls:
            if c.end_s < t0 or c.start_s > t1:
                continue
            kind, verdict = tone.get((c.process_group, c.collective, c.size_bytes), ("neutral", ""))
            label = (
                f"{c.process_group} {c.collective} {units.format_size(c.size_bytes) if c.size_bytes else '?'}"
                f" {c.algorithm}/{c.protocol}: {_t(c.time_s)}; {verdict}"
            )
            parts.append(
                f'<rect x="{x(c.start_s):.1f}" y="{y + LANE}" width="{max(x(c.end_s) - x(c.start_s), 1):.1f}"'
                f' height="{LANE - 2}" fill="{COLOURS[kind]}"><title>{e(label)}</title></rect>'
            )
    legend = " ".join(
        f'<tspan fill="{c}">\u25a0</tspan> {w}'
        for w, c in (
            ("computation", COMPUTE),
            ("as expected", COLOURS["good"]),
            ("slower than expected", COLOURS["bad"]),
            ("above the bound", COLOURS["ok"]),
            ("not judged", COLOURS["neutral"]),
        )
    )
    parts.append(
        f'<text x="{LEFT}" y="{height - 6}" font-size="11">{legend} \u00b7 {e(AXIS_WORDS)}; {e(_t(span))} shown</text>'
    )
    return (
        f'<svg class="plot" viewBox="0 0 {WIDTH} {height}" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'aria-label="step timeline">' + "".join(parts) + "</svg>"
    )


def _collectives(report) -> str:
    left = ' class="l"'
    head = "".join(
        f"<th{left if h in ('group', 'collective', 'verdict') else ''}>{h}</th>"
        for h in (
            "group",
            "collective",
            "size",
            "ranks",
            "alg/proto",
            "calls",
            "median",
            "total",
            "busbw GB/s",
            "expected",
            "bound",
            "verdict",
        )
    )
    body, reasons = [], {}
    unit = units.column_unit(r.size_bytes for r in report.collectives)
    for r in report.collectives:
        ran = f"{r.algorithm}/{r.protocol}" if r.algorithm != "-" else "-"
        note = f'<div class="why">{e(r.choice_note)}</div>' if r.choice_note else ""
        size = units.format_size_in(r.size_bytes, unit) if r.size_bytes else "?"
        busbw = f"{r.busbw_GBps:.3g}" if r.busbw_GBps is not None else "-"
        verdict = r.verdict.text
        if not r.verdict.kind.judged and r.verdict.reason:  # the reason once, under the table
            reasons[r.verdict.reason] = None
            verdict = r.verdict.label
        body.append(
            f'<tr><td class="l">{e(r.process_group)}</td><td class="l">{e(r.collective)}</td>'
            f"<td>{e(size)}</td><td>{r.group_size}</td><td>{e(ran)}</td><td>{r.calls}</td>"
            f"<td>{e(_t(r.time_s))}</td><td>{e(_t(r.total_s))}</td><td>{busbw}</td>"
            f"<td>{e(_t(r.expected_s))}</td><td>{e(_t(r.bound_s))}</td>"
            f'<td class="l {_tone(r.verdict)}"><b>{e(verdict)}</b>{note}</td></tr>'
        )
    why = "".join(f'<p class="explain">not judged: {e(w)}</p>' for w in reasons)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{why}"


def _steps(report) -> str:
    rows = "".join(
        f'<tr><td>{s.rank}</td><td class="l">{e(s.name)}</td><td>{e(_t(s.time_s))}</td>'
        f"<td>{e(_t(s.compute_s))}</td><td>{e(_t(s.comm_s))}</td><td>{e(_t(s.exposed_comm_s))}</td>"
        f"<td>{e(_t(s.idle_s))}</td><td>{e(_t(s.host_bound_s))}</td></tr>"
        for s in report.steps
    )
    return (
        '<table><thead><tr><th>rank</th><th class="l">step</th><th>time</th><th>compute</th><th>comm</th>'
        "<th>exposed comm</th><th>idle</th><th>of which host-bound</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def trace_section(report) -> str:
    exposed = sum(s.exposed_comm_s for s in report.steps)
    total = sum(s.time_s for s in report.steps)
    idle = sum(s.idle_s for s in report.steps)
    bound = [s.host_bound_s for s in report.steps if s.host_bound_s is not None]
    host = sum(bound) if bound else None
    slow = sum(r.verdict.kind.slower for r in report.collectives)
    judged = sum(r.verdict.kind.judged for r in report.collectives)
    tone = "bad" if slow else "good" if judged else "neutral"
    tiles = [
        _tile(
            "collectives",
            f"{len(report.collectives)} groups",
            f"{slow} of {judged} judged slower than expected" if judged else "none judged: no system known",
            f"verdict {tone}",
        ),
        _tile(
            "exposed communication",
            f"{exposed / total:.0%}" if total else "-",
            f"{_t(exposed)} of {_t(total)} over all steps and ranks",
        ),
        _tile(
            "idle",
            f"{idle / total:.0%}" if total else "-",
            f"neither computation nor exposed communication; {_t(host)} of it host-bound (CPU ops, GPU idle)"
            if host is not None
            else "neither computation nor exposed communication",
        ),
        _tile("system", report.assumed.system.name if report.assumed.system else "none", report.assumed.describe()),
    ]
    st = report.straggler
    if st and st["clear"]:
        tiles.append(
            _tile("straggler", f"rank {st['rank']}", f"the others waited {_t(st['cost_to_others_s'])}", "verdict bad")
        )
    notes = "".join(f"<li>{e(n)}</li>" for n in report.notes)
    return (
        '<section class="input"><h2>Training step from its traces</h2>'
        f'<p class="sub">{e(", ".join(report.sources))} \u00b7 {e(report.backend)}, world size '
        f'{report.world_size}</p><div class="tiles">{"".join(tiles)}</div>'
        f"<h3>Step timeline</h3>{timeline(report)}"
        f"<h3>Collectives</h3>{_collectives(report)}<h3>Steps</h3>{_steps(report)}"
        + (f"<h3>Notes</h3><ul>{notes}</ul>" if notes else "")
        + "</section>"
    )
