"""Rendering of Blink's packed trees and micro-benchmarks (`collperf trees`, `collperf simulate --pattern`)."""

from __future__ import annotations

from rich.table import Table

from collperf import units
from collperf.cli.render import escape, out


def _GBps(rate_Bps: float) -> str:
    return f"{rate_Bps / 1e9:.4g} GB/s"


def _route(path) -> str:
    return "->".join(map(str, path))


def print_trees(r) -> None:
    roots = ",".join(map(str, r.roots))
    out.print(f"[bold]{r.collective}[/bold] packed trees on {r.topology} ranks {','.join(map(str, r.ranks))}, "
              f"root {roots} (links {r.links}, transit {r.transit})")
    table = Table(title=f"{len(r.trees)} trees", title_justify="left")
    for column in ("root", "rate", "share", "edges (route)"):
        table.add_column(column, justify="left" if column.startswith("edges") else "right")
    for t in r.trees:
        edges = ", ".join(f"{e['parent']}->{e['child']}" + ("" if len(e["route"]) == 2 else f" ({_route(e['route'])})")
                          for e in t["edges"])
        table.add_row(str(t["root"]), _GBps(t["rate_Bps"]), f"{100 * t['share']:.1f} %", escape(edges))
    out.print(table)
    rings = "; ".join(_route(ring + ring[:1]) for ring in r.rings)
    out.print(f"packed rate {_GBps(r.rate_Bps)} per root   max-flow bound {_GBps(r.bound_Bps)}   "
              f"NCCL rings ({r.ring_kind}: {rings}) {_GBps(r.ring_rate_Bps)}   x{r.rate_Bps / r.ring_rate_Bps:.2f}")
    size = units.format_size(r.size_bytes)
    out.print(f"{r.collective} of {size}: packed {units.format_time(r.time_s)}, ring {units.format_time(r.ring_time_s)}"
              " (bandwidth terms)")
    if r.allreduce_time_s is not None and r.collective != "allreduce":
        out.print(f"allreduce of {size} on these trees: {units.format_time(r.allreduce_time_s)}, "
                  f"ring {units.format_time(r.ring_allreduce_time_s)}")
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
