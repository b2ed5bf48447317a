"""The command line: parse, call the API, print. No logic lives here that the API lacks."""

from __future__ import annotations

import json
import math
import sys
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from collperf import api, units
from collperf.collectives import busbw_factor
from collperf.bench import BenchConfig
from collperf.bench import run as run_bench
from collperf.errors import UsageError
from collperf.results import to_text
from collperf.results import write as write_results
from collperf.plots import plot_timeline
from collperf.schedule.cost import coefficients as schedule_coefficients
from collperf.runtime.launch import RunError
from collperf.schedule.verify import verify

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Performance of collective communication: predict, explain, compare.")
# Pipes and CI logs get a wide console rather than rich's 80 columns, so tables do not wrap.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 150)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 200)


def _print_json(doc) -> None:
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


# Network options shared by predict and crossover --------------------------------------------------
_NET_HELP = "Network"
Ranks = typer.Option(None, "--ranks", "-p", help="Number of ranks (with --latency/--bandwidth).", rich_help_panel=_NET_HELP)
Latency = typer.Option(None, "--latency", help="Per-message latency alpha, e.g. 10us.", rich_help_panel=_NET_HELP)
Bandwidth = typer.Option(None, "--bandwidth", help="Per-rank link bandwidth, e.g. 100GB/s or 400Gbps.", rich_help_panel=_NET_HELP)
ReduceBw = typer.Option("inf", "--reduce-bandwidth", help="Local reduction rate (1/gamma), e.g. 500GB/s; default infinite.",
                        rich_help_panel=_NET_HELP)
ClusterOpt = typer.Option(None, "--cluster", help="Preset: dgx-h100, dgx-a100, dgx-1v, dgx-2, trn1, pcie-gen4, chapter.",
                          rich_help_panel=_NET_HELP)
Nodes = typer.Option(None, "--nodes", help="Nodes of a two-level cluster.", rich_help_panel=_NET_HELP)
Rpn = typer.Option(None, "--ranks-per-node", help="Ranks per node.", rich_help_panel=_NET_HELP)
IntraLat = typer.Option(None, "--intra-latency", rich_help_panel=_NET_HELP)
IntraBw = typer.Option(None, "--intra-bandwidth", rich_help_panel=_NET_HELP)
InterLat = typer.Option(None, "--inter-latency", rich_help_panel=_NET_HELP)
InterBw = typer.Option(None, "--inter-bandwidth", help="Bandwidth of one NIC.", rich_help_panel=_NET_HELP)
Nics = typer.Option(None, "--nics-per-node", help="NICs per node (default: one per rank).", rich_help_panel=_NET_HELP)
IntraAlg = typer.Option("best", "--intra-algorithm", help="Algorithm of the intra-node phases (or best).")
InterAlg = typer.Option("best", "--inter-algorithm", help="Algorithm of the inter-node phase (or best).")


_NETWORK_OPTIONS = ("ranks", "latency", "bandwidth", "reduce_bandwidth", "cluster", "nodes", "ranks_per_node",
                    "intra_latency", "intra_bandwidth", "inter_latency", "inter_bandwidth", "nics_per_node")


def _network(options: dict):
    """The Network described by a command's network options (its locals())."""
    return api.network(**{k: options[k] for k in _NETWORK_OPTIONS})


@app.command()
def predict(
    collective: str = typer.Argument(..., help="allreduce, allgather, reducescatter, broadcast, reduce, alltoall, "
                                               "scatter, gather or sendrecv."),
    size: str = typer.Option("1M,64M,1G", "--size", "-s", help="Sizes (nccl-tests convention), comma-separated."),
    algorithm: str = typer.Option("all", "--algorithm", "-A", help="An algorithm, a comma list, or all."),
    segments: Optional[int] = typer.Option(None, "--segments", help="Pipeline segments for chain/double-binary-tree "
                                                                    "(default: the best per size)."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON document."),
    ranks: Optional[int] = Ranks, latency: Optional[str] = Latency, bandwidth: Optional[str] = Bandwidth,
    reduce_bandwidth: str = ReduceBw, cluster: Optional[str] = ClusterOpt, nodes: Optional[int] = Nodes,
    ranks_per_node: Optional[int] = Rpn, intra_latency: Optional[str] = IntraLat,
    intra_bandwidth: Optional[str] = IntraBw, inter_latency: Optional[str] = InterLat,
    inter_bandwidth: Optional[str] = InterBw, nics_per_node: Optional[int] = Nics,
    intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg,
):
    """Predict the time of COLLECTIVE for every algorithm, with its terms, bandwidths and lower bound."""
    net = _network(locals())
    results = api.predict(collective, size, net, algorithm, intra_algorithm, inter_algorithm, segments)
    if as_json:
        docs = [r.to_json() for r in results]
        _print_json(docs[0] if len(docs) == 1 else docs)
        return
    out.print(f"[bold]{results[0].collective}[/bold] on {results[0].network}")
    for r in results:
        _print_prediction(r)


def _print_prediction(r) -> None:
    table = Table(title=f"{r.collective}  size {units.format_size(r.size_bytes)} ({r.size_bytes} B)  "
                        f"ranks {r.ranks}", title_justify="left")
    for column in ("algorithm", "time", "latency", "bandwidth", "compute", "algbw GB/s", "busbw GB/s", "x bound"):
        table.add_column(column, justify="left" if column == "algorithm" else "right")
    for a in sorted(r.algorithms, key=lambda a: a.time_s):
        name = a.name + (f" (k={a.segments})" if a.segments else "")
        style = "bold green" if a.name == r.best else None
        table.add_row(("* " if a.name == r.best else "  ") + name, units.format_time(a.time_s),
                      units.format_time(a.latency_s), units.format_time(a.bandwidth_s),
                      units.format_time(a.compute_s), f"{a.algbw_GBps:.2f}", f"{a.busbw_GBps:.2f}",
                      f"{a.bound_ratio:.2f}", style=style)
        for ph in a.phases:
            table.add_row(escape(f"    {ph['phase']} [{ph['algorithm']}, {ph['ranks']} ranks]"),
                          units.format_time(ph["time_s"]), units.format_time(ph["latency_s"]),
                          units.format_time(ph["bandwidth_s"]), units.format_time(ph["compute_s"]), "", "", "",
                          style="dim")
    out.print(table)
    out.print(f"lower bound {units.format_time(r.lower_bound_s)}; best: [bold]{r.best}[/bold]")
    for name, why in r.skipped.items():
        out.print(f"[dim]skipped {name}: {why}[/dim]")
    out.print()


@app.command()
def crossover(
    collective: str = typer.Argument(...),
    min_size: str = typer.Option("1", "--min", help="Smallest size to consider."),
    max_size: str = typer.Option("16G", "--max", help="Largest size to consider."),
    algorithm: str = typer.Option("all", "--algorithm", "-A", help="Restrict to these algorithms (comma list)."),
    as_json: bool = typer.Option(False, "--json"),
    ranks: Optional[int] = Ranks, latency: Optional[str] = Latency, bandwidth: Optional[str] = Bandwidth,
    reduce_bandwidth: str = ReduceBw, cluster: Optional[str] = ClusterOpt, nodes: Optional[int] = Nodes,
    ranks_per_node: Optional[int] = Rpn, intra_latency: Optional[str] = IntraLat,
    intra_bandwidth: Optional[str] = IntraBw, inter_latency: Optional[str] = InterLat,
    inter_bandwidth: Optional[str] = InterBw, nics_per_node: Optional[int] = Nics,
    intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg,
):
    """Where the best algorithm for COLLECTIVE changes with the size."""
    net = _network(locals())
    found, regimes = api.crossover(collective, net, min_size, max_size, algorithm, intra_algorithm, inter_algorithm)
    if as_json:
        _print_json({"collective": collective, "ranks": net.ranks, "network": net.describe(),
                     "crossovers": [vars(c) for c in found], "regimes": [vars(r) for r in regimes]})
        return
    out.print(f"best {collective} algorithm by size on {net.describe()}")
    table = Table()
    table.add_column("from")
    table.add_column("to")
    table.add_column("best algorithm")
    for r in regimes:
        table.add_row(units.format_size(r.from_bytes), "" if math.isinf(r.to_bytes) else units.format_size(r.to_bytes),
                      r.algorithm)
    out.print(table)


@app.command()
def algorithms(
    collective: Optional[str] = typer.Argument(None, help="Only this collective."),
    as_json: bool = typer.Option(False, "--json"),
):
    """List every collective and algorithm with its cost formula and source."""
    rows = api.algorithms(collective)
    if as_json:
        _print_json([{"collective": a.collective, "algorithm": a.name, "formula": a.formula, "source": a.source,
                      "pipelined": a.pipeline is not None, "multiport": a.multiport} for a in rows])
        return
    table = Table(title="T = a alpha + b n beta + c n gamma (n = nccl-tests size; p ranks)", title_justify="left")
    for column in ("collective", "algorithm", "cost", "source"):
        table.add_column(column, overflow="fold")
    for a in rows:
        table.add_row(a.collective, a.name, a.formula, a.source)
    out.print(table)


@app.command()
def schedule(
    collective: str = typer.Argument(...),
    algorithm: str = typer.Option(..., "--algorithm", "-A", help="An algorithm of the collective, or hierarchical."),
    ranks: Optional[int] = typer.Option(None, "--ranks", "-p"),
    root: int = typer.Option(0, "--root"),
    segments: int = typer.Option(1, "--segments", help="Pipeline segments (chain, double-binary-tree)."),
    nodes: Optional[int] = typer.Option(None, "--nodes", help="hierarchical: nodes."),
    ranks_per_node: Optional[int] = typer.Option(None, "--ranks-per-node", help="hierarchical: ranks per node."),
    intra_algorithm: Optional[str] = typer.Option(None, "--intra-algorithm"),
    inter_algorithm: Optional[str] = typer.Option(None, "--inter-algorithm"),
    max_steps: int = typer.Option(64, "--max-steps", help="Print at most this many steps."),
    as_json: bool = typer.Option(False, "--json"),
):
    """Print an algorithm's schedule: who sends which chunks to whom at each step (-> copy, +> reduce)."""
    s = api.schedule(collective, algorithm, ranks, root, segments, nodes, ranks_per_node,
                     intra_algorithm, inter_algorithm)
    verify(s)
    a, b, c = schedule_coefficients(s)
    if as_json:
        _print_json({"collective": s.collective, "algorithm": s.algorithm, "ranks": s.ranks, "chunks": s.chunks,
                     "buffer_chunks": s.chunks_per_buffer, "root": s.root,
                     "cost": {"alpha": a, "n_beta": b, "n_gamma": c},
                     "steps": [[{"src": t.src, "dst": t.dst, "chunks": list(t.chunks), "op": t.op}
                                for t in st.transfers] for st in s.steps]})
        return
    out.print(escape(s.render(max_steps)))
    out.print(f"verified: computes {s.collective} on {s.ranks} ranks; cost {a:g} alpha + {b:.6g} n beta + {c:.6g} n gamma "
              f"(chunk = n / {s.chunks_per_buffer})")


@app.command("verify")
def verify_command(
    collective: Optional[str] = typer.Option(None, "--collective", "-c"),
    algorithm: Optional[str] = typer.Option(None, "--algorithm", "-A"),
    max_ranks: int = typer.Option(64, "--max-ranks"),
    min_ranks: int = typer.Option(1, "--min-ranks"),
    as_json: bool = typer.Option(False, "--json"),
):
    """Symbolically verify every schedule for every rank count up to --max-ranks."""
    rows = api.verify_all(collective, algorithm, max_ranks, min_ranks)
    failed = sum(len(r.failures) for r in rows)
    if as_json:
        _print_json([vars(r) for r in rows])
    else:
        table = Table(title=f"schedules verified for {min_ranks}..{max_ranks} ranks", title_justify="left")
        for column in ("collective", "algorithm", "rank counts / shapes", "result"):
            table.add_column(column)
        for r in rows:
            result = "[green]ok[/green]" if not r.failures else f"[red]{len(r.failures)} failed[/red]: " + escape(r.failures[0])
            table.add_row(r.collective, r.algorithm, str(r.ranks_checked), result)
        out.print(table)
    if failed:
        raise typer.Exit(1)


@app.command()
def simulate(
    collective: str = typer.Argument(...),
    algorithm: str = typer.Option(..., "--algorithm", "-A"),
    size: str = typer.Option("1G", "--size", "-s"),
    topology: str = typer.Option(..., "--topology", "-t",
                                 help="dgx1v | dgx2 | mesh:P | switch:P | ring:P | cluster:NxG | file.json"),
    mode: str = typer.Option("rounds", "--mode", help="rounds (fast) or events (congestion-aware)."),
    segments: int = typer.Option(1, "--segments"),
    root: int = typer.Option(0, "--root"),
    timeline: Optional[str] = typer.Option(None, "--timeline", help="Write a per-step timeline plot (PNG/SVG)."),
    as_json: bool = typer.Option(False, "--json"),
    latency: Optional[str] = Latency, bandwidth: Optional[str] = Bandwidth, reduce_bandwidth: str = ReduceBw,
    cluster: Optional[str] = ClusterOpt, intra_latency: Optional[str] = IntraLat,
    intra_bandwidth: Optional[str] = IntraBw, inter_latency: Optional[str] = InterLat,
    inter_bandwidth: Optional[str] = InterBw, nics_per_node: Optional[int] = Nics,
    intra_algorithm: Optional[str] = typer.Option(None, "--intra-algorithm"),
    inter_algorithm: Optional[str] = typer.Option(None, "--inter-algorithm"),
):
    """Simulate an algorithm's schedule on a topology: time, bandwidths, per-step times, busiest links."""
    result, s, topo = api.simulate(collective, algorithm, size, topology, latency, bandwidth, reduce_bandwidth,
                                   cluster, mode, segments, root, intra_algorithm, inter_algorithm,
                                   intra_latency=intra_latency, intra_bandwidth=intra_bandwidth,
                                   inter_latency=inter_latency, inter_bandwidth=inter_bandwidth,
                                   nics_per_node=nics_per_node)
    algbw = result.size_bytes / result.time_s if result.time_s > 0 else float("inf")
    busbw = algbw * busbw_factor(s.collective, s.ranks)
    if timeline:
        plot_timeline(result, s, timeline)
    if as_json:
        doc = result.to_json()
        doc.update({"collective": s.collective, "algorithm": s.algorithm, "ranks": s.ranks,
                    "topology": topo.name, "algbw_GBps": algbw / 1e9, "busbw_GBps": busbw / 1e9})
        _print_json(doc)
        return
    out.print(f"[bold]{s.collective} {s.algorithm}[/bold] of {units.format_size(result.size_bytes)} on {topo.describe()} "
              f"({mode} mode)")
    out.print(f"time {units.format_time(result.time_s)}   algbw {algbw / 1e9:.2f} GB/s   busbw {busbw / 1e9:.2f} GB/s   "
              f"{len(s.steps)} steps")
    table = Table(title="busiest links", title_justify="left")
    for column in ("link", "bytes", "capacity", "utilisation"):
        table.add_column(column, justify="left" if column == "link" else "right")
    for u in result.links[:8]:
        table.add_row(escape(u.link), units.format_size(round(u.bytes)), units.format_bandwidth(u.capacity_Bps),
                      f"{100 * u.utilisation:.1f} %")
    out.print(table)
    if timeline:
        out.print(f"timeline written to {timeline}")


@app.command()
def bench(
    collective: str = typer.Option("allreduce", "--collective", help="The collective to measure."),
    algorithm: str = typer.Option("builtin", "--algorithm", "-A", help="Comma list: ours and/or builtin."),
    ranks: Optional[int] = typer.Option(None, "--ranks", "-p", help="Local processes (ignored under torchrun)."),
    min_bytes: str = typer.Option("1K", "-b", "--minbytes", help="Smallest size (nccl-tests convention)."),
    max_bytes: str = typer.Option("1M", "-e", "--maxbytes", help="Largest size."),
    factor: int = typer.Option(2, "-f", "--stepfactor", help="Multiplicative step (0/1: use -i)."),
    step_bytes: str = typer.Option("1M", "-i", "--stepbytes", help="Additive step when -f is not > 1."),
    iters: int = typer.Option(20, "-n", "--iters", help="Timed iterations per size."),
    warmup: int = typer.Option(5, "-w", "--warmup_iters", help="Untimed warm-up iterations."),
    dtype: str = typer.Option("float32", "-d", "--dtype", help="float32 float64 float16 bfloat16 int32 int64."),
    op: str = typer.Option("sum", "-o", "--op", help="sum prod min max avg."),
    root: int = typer.Option(0, "-r", "--root"),
    check: int = typer.Option(1, "-c", "--check", help="Correctness-check iterations per size (0: off)."),
    average: int = typer.Option(1, "-a", "--average", help="Combine ranks' times: 0 rank 0, 1 mean, 2 min, 3 max."),
    segments: int = typer.Option(1, "--segments", help="Pipeline segments of chain/double-binary-tree."),
    slice_bytes: str = typer.Option("1M", "--slice-bytes", help="Messages are cut into slices of this size."),
    in_place: bool = typer.Option(True, "--in-place/--no-in-place", help="Also time in-place."),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds before the whole run is stopped."),
    json_path: Optional[str] = typer.Option(None, "--json", help="Write nccl-tests -J JSON (plus our fields)."),
    csv_path: Optional[str] = typer.Option(None, "--csv", help="Write a flat CSV table."),
    latency: Optional[str] = Latency, bandwidth: Optional[str] = Bandwidth, reduce_bandwidth: str = ReduceBw,
    cluster: Optional[str] = ClusterOpt, nodes: Optional[int] = Nodes,
):
    """Measure collectives on real processes (gloo locally, NCCL under torchrun with GPUs), nccl-tests style,
    each row beside the model's prediction."""
    config = BenchConfig(collective, algorithm, min_bytes, max_bytes, factor, step_bytes, iters, warmup, dtype, op,
                         root, check, average, segments, slice_bytes, in_place)
    net = None
    if latency is not None or bandwidth is not None or cluster is not None:
        net = api.network(ranks=ranks, latency=latency, bandwidth=bandwidth, reduce_bandwidth=reduce_bandwidth,
                          cluster=cluster, nodes=nodes)
    try:
        results = run_bench(config, ranks, timeout, net)
    except RunError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1)
    if results is None:   # a torchrun rank other than 0
        return
    sys.stdout.write(to_text(results))
    write_results(results, json_path, csv_path)
    if results.wrong_rows():
        err.print(f"[red]{results.wrong_rows()} test(s) had wrong results: their times are not to be trusted[/red]")
        raise typer.Exit(1)


def main() -> None:
    try:
        # without standalone mode click returns the exit code of typer.Exit instead of raising it
        code = app(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except UsageError as e:
        err.print(f"[red]error:[/red] {e}")
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # click's own usage errors
        import click
        if isinstance(e, click.exceptions.ClickException):
            e.show()
            sys.exit(e.exit_code)
        if isinstance(e, click.exceptions.Abort):
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
