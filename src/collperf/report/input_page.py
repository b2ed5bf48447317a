"""The report's section for an input that describes a system rather than a sweep (diagnose/inputs.py InputReport:
an NCCL debug log, a topology or graph dump, nvidia-smi topo -m, a link test): the verdict, what the input shows
with the line behind each value, the system assumed, what NCCL chose, the link verdicts and the check-first list.
Every string from the input passes through `e()`."""

from __future__ import annotations

from collperf.diagnose.inputs import LinkKind
from collperf.report.page import _tile, e

MAX_LINKS = 300  # a test's links beyond this are counted, not listed (the slow ones always listed)


def tone(report) -> str:
    """bad: a link measured slow; ok: something to check first; good: neither."""
    if any(v.verdict is LinkKind.SLOW for v in report.links):
        return "bad"
    return "ok" if report.check_first else "good"


def _line(line: str) -> str:
    return f'<div class="why mono">{e(line)}</div>' if line else ""


def _facts(title: str, rows: list, explain: str = "") -> str:
    if not rows:
        return ""
    body = "".join(
        f'<tr><td class="l">{e(what)}</td><td class="l">{e(value)}{_line(line)}</td></tr>' for what, value, line in rows
    )
    return (
        f"<h3>{e(title)}</h3>"
        + (f'<p class="explain">{e(explain)}</p>' if explain else "")
        + f'<table><thead><tr><th class="l">what</th><th class="l">value, and the line behind it</th></tr></thead>'
        f"<tbody>{body}</tbody></table>"
    )


def _system(report) -> str:
    assumed = report.assumed
    if assumed is None or assumed.system is None:
        return ""  # the notes say why none was assumed and which flag gives one
    items = [("system", assumed.describe())] + [
        (label, f"{value} ({source})") for label, value, source in assumed.values
    ]
    return (
        "<h3>System assumed</h3>"
        + '<dl class="system">'
        + "".join(f"<dt>{e(k)}</dt><dd>{e(v)}</dd>" for k, v in items)
        + "</dl>"
    )


def _links(report) -> str:
    if not report.links:
        return ""
    slow = [v for v in report.links if v.verdict is LinkKind.SLOW]
    shown = slow + [v for v in report.links if v.verdict is not LinkKind.SLOW][: max(0, MAX_LINKS - len(slow))]
    head = (
        '<tr><th class="l">link</th><th class="l">test</th><th>measured GB/s</th><th>rate GB/s</th>'
        '<th>median of the test GB/s</th><th class="l">verdict</th></tr>'
    )
    rows = []
    for v in shown:
        cls = "bad" if v.verdict is LinkKind.SLOW else "good" if v.verdict is LinkKind.AS_EXPECTED else ""
        rate = f"{v.rate_GBps:.4g}" if v.rate_GBps else "-"
        peers = f"{v.peers_GBps:.4g}" if v.peers_GBps else "-"
        why = f"{v.why} (rate: {v.rate_from})" if v.rate_from else v.why
        rows.append(
            f'<tr><td class="l">{e(v.link)}</td><td class="l">{e(v.test)}</td><td>{v.measured_GBps:.4g}</td>'
            f'<td>{e(rate)}</td><td>{e(peers)}</td><td class="l {cls}"><b>{e(v.verdict.value)}</b>'
            f'<div class="why">{e(why)}</div>{_line(v.line)}</td></tr>'
        )
    more = len(report.links) - len(shown)
    rest = f'<p class="explain">... and {more} more link(s), none slow (--json lists every one).</p>' if more else ""
    return (
        '<h3>Links</h3><p class="explain">each link measured against its rate and the median of the same '
        f"test's links.</p><table><thead>{head}</thead><tbody>{''.join(rows)}</tbody></table>{rest}"
    )


def _check_first(report) -> str:
    if not report.check_first:
        return "<h3>Check first</h3><p>Nothing the input shows needs checking first.</p>"
    items = "".join(f'<li class="warning"><b>{e(what)}</b>{_line(line)}</li>' for what, line in report.check_first)
    return f'<h3>Check first</h3><ul class="findings">{items}</ul>'


def input_section(report, index: int) -> str:
    """One InputReport as a section of the page."""
    tiles = [_tile("verdict", report.verdict, report.kind, f"verdict {tone(report)}")]
    if report.links:
        tiles.append(
            _tile(
                "links measured",
                str(len(report.links)),
                f"{sum(v.verdict is LinkKind.SLOW for v in report.links)} slow",
            )
        )
    notes = ("<h3>Notes</h3><ul>" + "".join(f"<li>{e(n)}</li>" for n in report.notes) + "</ul>") if report.notes else ""
    return (
        f'<section class="input" id="system-input-{index}"><h2>{e(report.kind)}: {e(report.source)}</h2>'
        f'<div class="tiles">{"".join(tiles)}</div>{_check_first(report)}'
        f"{_facts('What it shows', report.facts)}{_system(report)}"
        f"{_facts('What NCCL chose', report.chose, 'as the log says it, each with its line')}{_links(report)}"
        f"{notes}</section>"
    )


def overview(reports: list) -> str:
    """One line per system input, for a page of several."""
    head = '<tr><th>#</th><th class="l">input</th><th class="l">source</th><th class="l">verdict</th></tr>'
    body = "".join(
        f'<tr><td>[{i}]</td><td class="l">{e(r.kind)}</td><td class="l"><a href="#system-input-{i}">'
        f'{e(r.source)}</a></td><td class="l {tone(r)}"><b>{e(r.verdict)}</b></td></tr>'
        for i, r in enumerate(reports)
    )
    return f"<h2>System inputs</h2><table><thead>{head}</thead><tbody>{body}</tbody></table>"
