"""Rendering: rich tables for what the API returns, and its JSON (each result's to_json()) printed strictly
(the log commands' tables: render_logs.py).
No computation lives here."""

from __future__ import annotations

import json
import math
import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from collperf import plots, units

# Pipes and CI logs get a wide console rather than rich's 80 columns, so tables do not wrap.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 150)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 200)


def print_json(doc) -> None:
    """Strict JSON: numpy numbers become floats, infinities null (json.dumps would write Infinity)."""
    sys.stdout.write(json.dumps(_clean(doc), indent=2, allow_nan=False) + "\n")


def _clean(value):
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (str, bool, int)) or value is None:
        return value
    number = float(value)
    return number if math.isfinite(number) else None


def print_prediction(r, bound_s: float | None = None, difference: str = "", unreachable: bool = False) -> None:
    """One size's table; on a catalogue system, `bound_s` is the system's bound (Predictions.lower_bound_s: the
    number diagnose shows), `difference` why ours differs from it (Predictions.bound_difference) and `unreachable`
    whether the best time is below it (Predictions.below_system_bound)."""
    table = Table(
        title=f"{r.collective}  size {units.format_size(r.size_bytes)} ({r.size_bytes} B)  ranks {r.ranks}",
        title_justify="left",
    )
    for column in ("algorithm", "time", "latency", "bandwidth", "compute", "algbw GB/s", "busbw GB/s", "x bound"):
        table.add_column(column, justify="left" if column == "algorithm" else "right")
    for a in sorted(r.algorithms, key=lambda a: a.time_s):
        name = a.name + (f" (k={a.segments})" if a.segments else "")
        style = "bold green" if a.name == r.best else None
        table.add_row(
            ("* " if a.name == r.best else "  ") + name,
            units.format_time(a.time_s),
            units.format_time(a.latency_s),
            units.format_time(a.bandwidth_s),
            units.format_time(a.compute_s),
            _gb(a.algbw_GBps),
            _gb(a.busbw_GBps),
            f"{a.bound_ratio:.2f}",
            style=style,
        )
        for ph in a.phases:
            table.add_row(
                escape(f"    {ph['phase']} [{ph['algorithm']}, {ph['ranks']} ranks]"),
                units.format_time(ph["time_s"]),
                units.format_time(ph["latency_s"]),
                units.format_time(ph["bandwidth_s"]),
                units.format_time(ph["compute_s"]),
                "",
                "",
                "",
                style="dim",
            )
    out.print(table)
    out.print(f"lower bound {_bound_text(r, bound_s, difference)}; best: [bold]{r.best}[/bold]")
    if unreachable:
        out.print(
            f"[yellow]note:[/yellow] the best time is below this system's bound ({units.format_time(bound_s)}): the "
            "links priced above leave out what binds the system, so no time below that bound is reachable on it"
        )
    for name, why in r.skipped.items():
        out.print(f"[dim]skipped {name}: {why}[/dim]")
    for note in r.notes:
        out.print(f"[yellow]note:[/yellow] {escape(note)}")
    out.print()


# why the system's bound is what it is, where it differs from our schedules' own (Predictions.bound_difference)
_WHY = {
    "in-network": "with in-network reduction (SHARP, NCCL's CollNet)",
    "in-switch": "with in-switch reduction (NVLS)",
    "intra-node": "bandwidth alone, where the intra-node links bind",
    "host bridge": "bandwidth alone, where the host bridge binds",
    "links": "bandwidth alone, on the catalogue's link rates for this system",
}


def _bound_text(r, bound_s: float | None, difference: str) -> str:
    """The lower bound; where the system's (what diagnose shows) and our schedules' differ, both, each labelled."""
    ours = units.format_time(r.lower_bound_s)
    if bound_s is None or not difference:
        return ours
    theirs, latency = units.format_time(bound_s), units.format_time(r.lower_bound_latency_s)
    if difference == "latency":
        if theirs == ours:  # the latency is too small to show at this many digits: say its share instead
            return (
                f"{theirs} (bandwidth alone; the links' {latency} latency adds "
                f"{100 * r.lower_bound_latency_s / r.lower_bound_s:.2g} % to ours, what x bound divides by)"
            )
        return f"{theirs} bandwidth alone, {ours} with the links' {latency} latency (ours, what x bound divides by)"
    with_latency = f", with their {latency} latency" if r.lower_bound_latency_s > 0 else ""
    return (
        f"{theirs} {_WHY[difference]}; {ours} our schedules' own (on the links priced above{with_latency}; "
        "what x bound divides by)"
    )


def _gb(value) -> str:
    return "-" if value is None else ("inf" if math.isinf(value) else f"{value:.2f}")


def print_plan(p) -> None:
    m = p.model
    if p.fits is False:
        out.print(f"[red bold]does not fit[/red bold] in GPU memory: {escape(p.warnings[0])}")
    out.print(
        f"[bold]{m.name}[/bold] ({m.params:.3g} parameters, {m.layers} layers, hidden {m.hidden}, "
        f"activation {units.format_size(round(m.activation))} per micro-batch) as {p.layout.describe()}, "
        f"{p.layout.micro_batches} micro-batch(es), on {escape(p.cluster.describe())}"
    )
    table = Table()
    share = "share of step" if p.compute_s else "share of communication"
    for column in (
        "kind",
        "collective",
        "group",
        "where",
        "algorithm",
        "count",
        "size",
        "per op",
        "total",
        "exposed",
        share,
    ):
        table.add_column(column, justify="left" if column in ("kind", "collective", "where", "algorithm") else "right")
    step = p.step_s if p.compute_s else p.comm_s
    for item in p.items:
        table.add_row(
            item.kind,
            item.collective,
            str(item.group_ranks),
            item.level,
            item.algorithm,
            str(item.count),
            units.format_size(round(item.size_bytes)),
            units.format_time(item.time_per_op_s),
            units.format_time(item.total_s),
            "",
            "",
        )
    for kind, total in p.by_kind().items():
        exposed = p.exposed.get(kind, total)
        table.add_row(
            f"[bold]{kind}[/bold]",
            "",
            "",
            "",
            "",
            "",
            "",
            "",
            units.format_time(total),
            units.format_time(exposed),
            f"{100 * exposed / step:.1f} %" if step else "-",
        )
    out.print(table)
    line = f"communication {units.format_time(p.comm_s)} (dominant: {p.dominant})"
    if p.compute_s:
        line += (
            f"; compute {units.format_time(p.compute_s)}; pipeline bubble {units.format_time(p.bubble_s)} "
            f"({100 * p.bubble_s / p.compute_s:.1f} % of compute); exposed {units.format_time(p.exposed_s)}; "
            f"step {units.format_time(p.step_s)}; {p.speedup:.2f}x faster than without overlap"
        )
    out.print(line)
    if p.memory is not None:
        out.print(memory_line(p.memory))
    if p.measured is not None:
        m = p.measured
        kinds = ", ".join(
            f"{k} {units.format_time(t)} ({100 * m.hidden.get(k, 0):.0f} % hidden)" for k, t in m.comm_s.items()
        )
        out.print(
            f"from the trace ({m.steps} steps): compute {units.format_time(m.compute_s or 0)} per step; "
            f"measured communication per step: {kinds}"
        )
    for warning in p.warnings:
        out.print(f"[red]warning:[/red] {escape(warning)}")
    out.print()


def memory_line(m) -> str:
    gib = 2**30
    where = (
        f" of {m.usable_bytes / gib:.1f} GiB usable ({m.gpu_bytes / gib:.1f} GiB less {100 * m.headroom:.0f} % "
        "kept free: --memory-headroom)"
        if m.gpu_bytes
        else ""
    )
    return (
        f"memory per GPU {m.total_bytes / gib:.1f} GiB{where}: weights {m.weights_bytes / gib:.1f}, gradients "
        f"{m.grads_bytes / gib:.1f}, optimizer {m.optimizer_bytes / gib:.1f}, activations "
        f"{m.activations_bytes / gib:.1f} GiB" + ("" if m.fits is not False else "  [red]does not fit[/red]")
    )


def print_plan_comparison(plans, best: int) -> None:
    table = Table(title="side by side", title_justify="left")
    for column in ("", "layout", "cluster", "TP", "PP", "DP/ZeRO", "communication", "step"):
        table.add_column(column)
    for i, p in enumerate(plans):
        kinds = p.by_kind()
        c = p.cluster
        table.add_row(
            "*" if i == best else "",
            p.layout.describe(),
            f"{c.name} {c.nodes}x{c.ranks_per_node}",
            units.format_time(kinds.get("TP", 0)),
            units.format_time(kinds.get("PP", 0)),
            units.format_time(kinds.get("DP", 0) + kinds.get("ZeRO", 0)),
            units.format_time(p.comm_s),
            units.format_time(p.step_s) if p.compute_s else "-",
            style="bold green" if i == best else None,
        )
    out.print(table)


def print_predictions(results) -> None:
    out.print(f"[bold]{results[0].collective}[/bold] on {results[0].network}")
    for i, r in enumerate(results):
        on_system = bool(getattr(results, "bands", None))
        print_prediction(
            r,
            results.lower_bound_s(i) if on_system else None,
            results.bound_difference(i) if on_system else "",
            on_system and results.below_system_bound(i),
        )


def print_crossover(collective: str, net, ranges) -> None:
    out.print(f"best {collective} algorithm by size on {net.describe()}")
    table = Table()
    for column in ("from", "to", "best algorithm"):
        table.add_column(column)
    for r in ranges:
        table.add_row(
            units.format_size(r.from_bytes),
            "" if math.isinf(r.to_bytes) else units.format_size(r.to_bytes),
            r.algorithm,
        )
    out.print(table)


def print_algorithms(rows) -> None:
    table = Table(title="T = a alpha + b n beta + c n gamma (n = nccl-tests size; p ranks)", title_justify="left")
    for column in ("collective", "algorithm", "cost", "source"):
        table.add_column(column, overflow="fold")
    for a in rows:
        table.add_row(a.collective, a.name, a.formula, a.source)
    out.print(table)


def print_schedule(s, coefficients, max_steps: int) -> None:
    a, b, c = coefficients
    out.print(escape(s.render(max_steps)))
    out.print(
        f"verified: computes {s.collective} on {s.ranks} ranks; cost {a:g} alpha + {b:.6g} n beta + "
        f"{c:.6g} n gamma (chunk = n / {s.chunks_per_buffer})"
    )


def print_verification(rows, min_ranks: int, max_ranks: int) -> None:
    table = Table(title=f"schedules verified for {min_ranks}..{max_ranks} ranks", title_justify="left")
    for column in ("collective", "algorithm", "rank counts / shapes", "result"):
        table.add_column(column)
    for r in rows:
        result = (
            "[green]ok[/green]" if not r.failures else f"[red]{len(r.failures)} failed[/red]: " + escape(r.failures[0])
        )
        table.add_row(r.collective, r.algorithm, str(r.ranks_checked), result)
    out.print(table)


def print_simulation(sim) -> None:
    r, s = sim.result, sim.schedule
    out.print(
        f"[bold]{s.collective} {s.algorithm}[/bold] of {units.format_size(r.size_bytes)} on "
        f"{sim.topology.describe()} ({r.mode} mode)"
    )
    out.print(
        f"time {units.format_time(r.time_s)}   algbw {_gb(sim.algbw_Bps and sim.algbw_Bps / 1e9)} GB/s   "
        f"busbw {_gb(sim.busbw_Bps and sim.busbw_Bps / 1e9)} GB/s   {s.step_count} steps"
    )
    table = Table(title="busiest links", title_justify="left")
    for column in ("link", "bytes", "capacity", "utilisation"):
        table.add_column(column, justify="left" if column == "link" else "right")
    for u in r.links[:8]:
        table.add_row(
            escape(u.link),
            units.format_size(round(u.bytes)),
            units.format_bandwidth(u.capacity_Bps),
            f"{100 * u.utilisation:.1f} %",
        )
    out.print(table)
    for note in sim.notes:
        out.print(f"[dim]note: {escape(note)}[/dim]")


def print_testbed_status(rows) -> None:
    if not rows:
        out.print("no testbed is up")
    for r in rows:
        out.print(f"{r['namespace']}: {', '.join(r['addresses'])}; shaped {r['shaping']}; {r['processes']} processes")


def print_profile(profile: dict, output) -> None:
    if "links" in profile:  # a topology testbed: each link measured
        out.print(profile["testbed"])
        for m in profile["links"]:
            out.print(
                f"  {m['a']} - {m['b']}: {units.format_bandwidth(m['measured_Bps'])} of "
                f"{units.format_bandwidth(m['configured_Bps'])} configured, one-way {units.format_time(m['latency_s'])}"
            )
        out.print(f"profile written to {output}" if output else "")
        return
    for level in ("intra", "inter"):
        link = profile.get(level)
        if link:
            out.print(
                f"{level}: alpha {units.format_time(link['latency_s'])}, bandwidth "
                f"{units.format_bandwidth(link['bandwidth_Bps'])}"
            )
    out.print(
        f"tiny-allreduce alpha {units.format_time(profile['measured']['allreduce_alpha_s'])}; reduce bandwidth "
        f"{units.format_bandwidth(profile['reduce_bandwidth_Bps'])}"
        + (f"; profile written to {output}" if output else "")
    )


def print_bound(result: dict) -> None:
    m = result["measured_bound"]
    out.print(f"allreduce of {units.format_size(result['size_bytes'])} on {result['ranks']} ranks")
    out.print(
        f"  measured lower bound {units.format_time(m['bound_s'])} = forwarding {m['items_per_hop']} floats over "
        f"{m['hops']} hops {units.format_time(m['forward_s'])} + reducing {units.format_time(m['compute_s'])}"
    )
    if result.get("model_bound_s"):
        out.print(f"  model lower bound {units.format_time(result['model_bound_s'])} (from the profile)")
    for name, t in result["algorithms"].items():
        out.print(f"  {name:10s} {units.format_time(t)}  = {t / m['bound_s']:.2f} x the measured bound")


def print_validation(v) -> None:
    for text in v.networks:
        out.print(f"validated on {escape(text)}")
    table = Table()
    for column in ("collective", "algorithm", "ranks", "regime", "rows", "median |error|", "worst |error|", "worst at"):
        table.add_column(column)
    for r in v.summary:
        table.add_row(
            r["collective"],
            r["algorithm"],
            str(r["ranks"]),
            r["regime"],
            str(r["rows"]),
            f"{100 * r['median_abs_error']:.1f} %",
            f"{100 * r['worst_signed_error']:+.1f} %",
            units.format_size(r["worst_size"]),
        )
    out.print(table)


def print_plans(plans, best: int) -> None:
    for p in plans:
        print_plan(p)
    if len(plans) > 1:
        print_plan_comparison(plans, best)


# --- files: plots and bench outputs (the writers live with the data; these only call them) ---------------


def plot_timeline(sim, path) -> None:
    plots.plot_timeline(sim.result, sim.schedule, path)


def plot_diagnoses(diagnoses, path: str) -> list[str]:
    """One plot per diagnosis: PATH for one, PATH-1.png, PATH-2.png ... for several."""
    stem, _, suffix = path.rpartition(".")
    paths = [path] if len(diagnoses) == 1 else [f"{stem}-{i + 1}.{suffix}" for i in range(len(diagnoses))]
    for d, p in zip(diagnoses, paths):
        plots.plot_diagnosis(d, p)
    return paths


def plot_validation(validation, path) -> None:
    plots.plot_validation(validation.rows, path)


def print_search(found, why: bool = False, detail: str | None = None) -> None:
    if found.plans:
        first = found.plans[0]
        lay = first.layout
        batch = lay.dp * lay.micro_batches * first.model.micro_batch
        out.print(
            f"[bold]{first.model.name}[/bold] on {lay.ranks} GPUs of {escape(first.cluster.describe())}, "
            f"{batch} sequences of {first.model.seq_len} per step"
        )
    out.print(
        f"{found.considered} layouts considered, {found.too_big} do not fit memory; "
        f"{len(found.plans)} shown, fastest first ({found.seconds:.2f} s)"
    )
    if found.gpu_bytes:
        out.print(
            f"memory per GPU: {found.gpu_bytes * (1 - found.headroom) / 2**30:.1f} GiB usable "
            f"({found.gpu_bytes / 2**30:.1f} GiB less {100 * found.headroom:.0f} % kept free: --memory-headroom)"
        )
    for note in found.notes:
        out.print(f"[dim]note: {escape(note)}[/dim]")
    if not found.plans:
        out.print(f"[red bold]no layout to show:[/red bold] {escape(found.why_empty or '')}")
        return
    table = Table()
    for column in ("#", "layout", "micro-batch x count", "step", "compute", "bubble", "exposed comm", "memory GiB"):
        table.add_column(column, justify="left" if column == "layout" else "right")
    for i, p in enumerate(found.plans):
        mem = f"{p.memory.total_bytes / 2**30:.1f}" if p.memory is not None else "-"
        table.add_row(
            str(i + 1),
            p.layout.describe(),
            f"{p.model.micro_batch} x {p.layout.micro_batches}",
            units.format_time(p.step_s),
            units.format_time(p.compute_s or 0),
            units.format_time(p.bubble_s),
            units.format_time(p.exposed_s),
            mem,
        )
    out.print(table)
    if why:
        for i, p in enumerate(found.plans):
            out.print(f"{i + 1}. {escape(p.layout.describe())}: {escape(plan_why(p))}")
    if detail:
        out.print("one layout in detail (the first above):")
        out.print(escape(detail), soft_wrap=True)
    if why:
        out.print("[dim]every layout: --search --gpus N --global-batch B[/dim]")


def plan_why(p) -> str:
    """Where one plan's step goes, in a line: compute, bubble, the largest exposed communication, memory."""
    step = p.step_s
    parts = [f"compute {100 * (p.compute_s or 0) / step:.0f} % of the step"]
    if p.bubble_s:
        parts.append(f"bubble {100 * p.bubble_s / step:.0f} %")
    if p.exposed:
        kind = max(p.exposed, key=p.exposed.get)
        parts.append(f"exposed communication {100 * p.exposed_s / step:.0f} % (most: {kind})")
    if p.memory is not None and p.memory.gpu_bytes:
        parts.append(f"memory {p.memory.total_bytes / 2**30:.0f} of {p.memory.usable_bytes / 2**30:.0f} GiB usable")
    return ", ".join(parts)


def link_progress(done: int, total: int, m) -> None:
    """calibrate on a topology testbed: one stderr line per link as it is measured."""
    err.print(
        f"link {done}/{total} ({m.a}, {m.b}): {m.measured_Bps / 1e6:.3g} of {m.configured_Bps / 1e6:.3g} MB/s, "
        f"{m.latency_s * 1e6:.0f} us"
    )
