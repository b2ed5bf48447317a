"""Rendering of Blink's packed trees and micro-benchmarks (`collperf trees`, `collperf simulate --pattern`)."""

from __future__ import annotations

from rich.table import Table

from collperf import units
from collperf.cli.render import escape, out, print_predictions


def _GBps(rate_Bps: float) -> str:
    return f"{rate_Bps / 1e9:.4g} GB/s"


def _route(path) -> str:
    return "->".join(map(str, path))


def print_trees(r) -> None:
    roots = ",".join(map(str, r.roots))
    out.print(
        f"[bold]{r.collective}[/bold] packed trees on {r.topology} ranks {','.join(map(str, r.ranks))}, "
        f"root {roots} (links {r.links}, transit {r.transit})"
    )
    table = Table(title=f"{len(r.trees)} trees", title_justify="left")
    for column in ("root", "rate", "share", "edges (route)"):
        table.add_column(column, justify="left" if column.startswith("edges") else "right")
    for t in r.trees:
        edges = ", ".join(
            f"{e['parent']}->{e['child']}" + ("" if len(e["route"]) == 2 else f" ({_route(e['route'])})")
            for e in t["edges"]
        )
        table.add_row(str(t["root"]), _GBps(t["rate_Bps"]), f"{100 * t['share']:.1f} %", escape(edges))
    out.print(table)
    rings = "; ".join(_route(ring + ring[:1]) for ring in r.rings)
    out.print(
        f"packed rate {_GBps(r.rate_Bps)} per root   max-flow bound {_GBps(r.bound_Bps)}   "
        f"NCCL rings ({r.ring_kind}: {rings}) {_GBps(r.ring_rate_Bps)}   x{r.rate_Bps / r.ring_rate_Bps:.2f}"
    )
    size = units.format_size(r.size_bytes)
    out.print(
        f"{r.collective} of {size}: packed {units.format_time(r.time_s)}, ring {units.format_time(r.ring_time_s)}"
        " (bandwidth terms)"
    )
    if r.allreduce_time_s is not None and r.collective != "allreduce":
        out.print(
            f"allreduce of {size} on these trees: {units.format_time(r.allreduce_time_s)}, "
            f"ring {units.format_time(r.ring_allreduce_time_s)}"
        )
    for note in r.notes:
        out.print(f"note: {escape(note)}")


def print_pattern(run) -> None:
    roles = "; ".join(f"{k} {','.join(map(str, v)) if isinstance(v, list) else v}" for k, v in run.roles.items())
    out.print(f"[bold]{run.pattern}[/bold] on {run.topology} ({roles}), {run.segments} segments, {run.mode} mode")
    table = Table()
    for column in ("size", "time", "throughput"):
        table.add_column(column, justify="right")
    for n, t, rate in zip(run.sizes_bytes, run.time_s, run.throughput_Bps):
        table.add_row(units.format_size(n), units.format_time(t), _GBps(rate))
    out.print(table)


def print_topology_prediction(r) -> None:
    """`collperf predict --topology`: the packed trees' model (and the hybrid split), or the closed forms on
    the switch's link."""
    group = ",".join(map(str, r.ranks))
    if r.blink is None:
        out.print(
            f"{r.topology} ranks {group}: every pair through the switch, "
            f"{units.format_time(r.link.latency_s)} and {_GBps(r.link.bandwidth_Bps)} (the closed forms' link)"
        )
        print_predictions(r.predictions)
        return
    first = r.blink[0]
    hybrid = first.hybrid is not None
    out.print(
        f"[bold]{first.collective}[/bold] on Blink's packed trees, {r.topology} GPUs {group}, root "
        f"{','.join(map(str, first.roots)) if len(first.roots) == 1 else 'every rank'}"
        + (
            f"; hybrid NVLink {_GBps(first.hybrid['nvlink_Bps'])} + PCIe {_GBps(first.hybrid['pcie_Bps'])}, "
            f"T_dpa {units.format_time(first.hybrid['t_dpa_s'])} (equation 8)"
            if hybrid
            else f"; {_GBps(first.rate_Bps)} per root"
        )
    )
    table = Table()
    columns = ["size", "time", "algbw"]
    columns += ["over PCIe", "T_PCIe", "T_NVLink", "NVLink only", "gain"] if hybrid else []
    columns += [f"NCCL rings ({first.ring_kind})", "x ring"]
    for c in columns:
        table.add_column(c, justify="right")
    for b in r.blink:
        row = [units.format_size(b.size_bytes), units.format_time(b.time_s), _GBps(b.algbw_Bps)]
        if hybrid:
            h = b.hybrid
            row += [
                f"{100 * h['pcie_bytes'] / b.size_bytes:.1f} %" if b.size_bytes else "-",
                units.format_time(h["pcie_time_s"]),
                units.format_time(h["nvlink_time_s"]),
                units.format_time(h["nvlink_only_time_s"]),
                f"x{h['gain']:.3f}",
            ]
        row += [units.format_time(b.ring_time_s), f"x{b.ring_time_s / b.time_s:.2f}" if b.time_s else "-"]
        table.add_row(*row)
    out.print(table)
    out.print("bandwidth terms (the appendix's model; `collperf simulate -A blink` adds the pipeline and latencies)")
    for b in r.blink:
        for note in b.notes:
            out.print(f"note: {escape(note)}")
