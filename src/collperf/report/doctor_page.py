"""The doctor's campaign in the HTML report: per component its verdict and evidence, every round's tests with
measured and expected times, and what the campaign cost against exhaustive pairs. Reads the campaign's JSON
document (TestbedReport.to_json on the testbed, the launcher's on torchrun or Slurm), so one page serves both."""

from __future__ import annotations

from collperf import __version__, units
from collperf.report import page
from collperf.report.page import _tile, e

_TONE = {"healthy": "good", "degraded": "bad", "failed": "bad"}


def _verdict(c: dict) -> str:
    if c["verdict"] == "degraded":
        return f"degraded by {100 * c['degraded_by']:.0f} %"
    return c["verdict"]


def _t(value) -> str:
    return units.format_time(value) if value is not None else "-"


def _components(doc: dict) -> str:
    rows = "".join(
        f'<tr><td class="l">{e(c["component"])}</td><td class="l {_TONE.get(c["verdict"], "")}"><b>'
        f'{e(_verdict(c))}</b></td><td class="why">{"<br>".join(e(x) for x in c["evidence"]) or "-"}</td></tr>'
        for c in doc["components"]
    )
    return (
        '<table><thead><tr><th class="l">component</th><th class="l">verdict</th><th class="l">evidence'
        f"</th></tr></thead><tbody>{rows}</tbody></table>"
    )


def _rounds(doc: dict) -> str:
    walls = doc.get("round_wall_s") or []
    rows = []
    for number, tests in enumerate(doc["log"], 1):
        wall = _t(walls[number - 1]) if number <= len(walls) else "-"
        for i, t in enumerate(tests):
            ratio = f"{t['ratio']:.2f}" if t["ratio"] is not None else "did not finish"
            threshold = f"{100 * t['threshold']:.0f} %" if t.get("threshold") is not None else "-"
            tone = "good" if t["passed"] else "bad"
            dead = f" ({', '.join(t['dead'])} did not answer)" if t.get("dead") else ""
            lead = (
                (
                    f'<td rowspan="{len(tests)}">{number}</td><td class="l" rowspan="{len(tests)}">'
                    f'{e(t["stage"])}</td><td rowspan="{len(tests)}">{e(wall)}</td>'
                )
                if i == 0
                else ""
            )
            rows.append(
                f'<tr>{lead}<td class="l">{e(" + ".join(t["hosts"]))}</td>'
                f"<td>{e(_t(t.get('measured_s')))}</td><td>{e(_t(t.get('expected_s')))}</td>"
                f"<td>{e(ratio)}</td><td>{e(threshold)}</td>"
                f'<td class="l {tone}"><b>{"pass" if t["passed"] else "fail"}</b>{e(dead)}</td></tr>'
            )
    return (
        '<table><thead><tr><th>round</th><th class="l">stage</th><th>round wall time</th><th class="l">hosts'
        "</th><th>measured</th><th>expected</th><th>speed / expected</th><th>allowed shortfall</th>"
        f'<th class="l">result</th></tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def doctor_section(doc: dict) -> str:
    """The campaign's section of the page, from its JSON document."""
    accused = [c for c in doc["components"] if c["verdict"] != "healthy"]
    verdict = "; ".join(f"{c['component']} {_verdict(c)}" for c in accused) if accused else "healthy"
    pairs = doc.get("exhaustive_pairs") or {}
    where = doc.get("where") or (
        f"testbed: {doc['testbed']['hosts']} hosts on {doc['testbed']['leaves']} "
        f"leaves, {doc['testbed']['rate']} per host"
        if doc.get("testbed")
        else ""
    )
    injected = doc.get("injected")
    tiles = [
        _tile(
            "verdict", verdict, f"{len(doc['components'])} components judged", f"verdict {'bad' if accused else 'good'}"
        ),
        _tile(
            "tests",
            str(doc["tests"]),
            f"the plan predicts {doc['predicted_tests']}" if doc.get("predicted_tests") is not None else "",
        ),
        _tile(
            "rounds",
            str(doc["rounds"]),
            f"bound ceil(log2 N)+3 = {doc['round_bound']}" if doc.get("round_bound") else "",
        ),
        _tile("wall time", _t(doc.get("wall_s")), "the whole campaign, set-up included"),
    ]
    if pairs:
        tiles.append(_tile("exhaustive pairs", f"{pairs['tests']} tests", f"in {pairs['rounds']} rounds"))
    sub = where + (f" \u00b7 injected: {', '.join(injected)}" if injected else "")
    return (
        '<section class="input"><h2>Cluster health: the doctor\'s campaign</h2>'
        + (f'<p class="sub">{e(sub)}</p>' if sub else "")
        + f'<div class="tiles">{"".join(tiles)}</div>'
        "<h3>Per component</h3>"
        + _components(doc)
        + '<h3>Rounds</h3><p class="explain">Each test passes when its speed is at least (1 - allowed '
        "shortfall) of the expected: the model's time for the round (tests that share a link priced "
        "together) over the box's efficiency; a host alone against the median of the hosts alone.</p>"
        + _rounds(doc)
        + "</section>"
    )


def doctor_page(doc: dict, command: str = "", title: str | None = None) -> str:
    """A whole page for one campaign (`collperf doctor ... --html FILE`)."""
    return page.render(
        [], [], None, command, __version__, title or "collperf doctor: is this cluster healthy?", [doctor_section(doc)]
    )
