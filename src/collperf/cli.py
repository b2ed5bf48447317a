"""The command line: parse, call the API, print. No logic lives here that the API lacks."""

from __future__ import annotations

import json
import math
import signal
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
from collperf.collectives import get_collective
from collperf.plots import plot_diagnosis, plot_timeline, plot_validation
from collperf.testbed import Testbed
from collperf.testbed import down as testbed_down_of
from collperf.testbed import parse_spec as parse_testbed
from collperf.testbed import status as testbed_status_of
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
ProfileOpt = typer.Option(None, "--profile", help="A calibrated profile (collperf calibrate -o FILE).",
                          rich_help_panel=_NET_HELP)
IntraAlg = typer.Option("best", "--intra-algorithm", help="Algorithm of the intra-node phases (or best).")
InterAlg = typer.Option("best", "--inter-algorithm", help="Algorithm of the inter-node phase (or best).")


_NETWORK_OPTIONS = ("ranks", "latency", "bandwidth", "reduce_bandwidth", "cluster", "nodes", "ranks_per_node",
                    "intra_latency", "intra_bandwidth", "inter_latency", "inter_bandwidth", "nics_per_node", "profile")


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
    inter_bandwidth: Optional[str] = InterBw, nics_per_node: Optional[int] = Nics, profile: Optional[str] = ProfileOpt,
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
    inter_bandwidth: Optional[str] = InterBw, nics_per_node: Optional[int] = Nics, profile: Optional[str] = ProfileOpt,
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
    profile: Optional[str] = ProfileOpt,
):
    """Simulate an algorithm's schedule on a topology: time, bandwidths, per-step times, busiest links."""
    result, s, topo = api.simulate(collective, algorithm, size, topology, latency, bandwidth, reduce_bandwidth,
                                   cluster, mode, segments, root, intra_algorithm, inter_algorithm,
                                   intra_latency=intra_latency, intra_bandwidth=intra_bandwidth,
                                   inter_latency=inter_latency, inter_bandwidth=inter_bandwidth,
                                   nics_per_node=nics_per_node, profile=profile)
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
    cluster: Optional[str] = ClusterOpt, nodes: Optional[int] = Nodes, profile: Optional[str] = ProfileOpt,
    testbed: Optional[str] = typer.Option(None, "--testbed", help="Run on an emulated cluster: hosts=4,rate=200mbit"
                                          "[,ranks-per-host=2]; brought up before and torn down after."),
):
    """Measure collectives on real processes (gloo locally, NCCL under torchrun with GPUs), nccl-tests style,
    each row beside the model's prediction."""
    config = BenchConfig(collective, algorithm, min_bytes, max_bytes, factor, step_bytes, iters, warmup, dtype, op,
                         root, check, average, segments, slice_bytes, in_place)
    bed = parse_testbed(testbed) if testbed else None
    if bed is not None:
        ranks = bed.ranks
    net = None
    if latency is not None or bandwidth is not None or cluster is not None or profile is not None:
        net = api.network(ranks=ranks, latency=latency, bandwidth=bandwidth, reduce_bandwidth=reduce_bandwidth,
                          cluster=cluster, nodes=nodes, profile=profile)
    try:
        if bed is not None:
            with bed:
                results = run_bench(config, ranks, timeout, net, testbed=bed)
        else:
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


def _gb(value) -> str:
    return "-" if value is None else ("inf" if math.isinf(value) else f"{value:.2f}")


def _print_table_header(t) -> None:
    out.print(f"[bold]{escape(t.describe())}[/bold]")
    extra = [f"{k.replace('_', ' ')} {t.header[k]}" for k in ("nccl_tests_version", "nccl_version") if t.header.get(k)]
    if t.header.get("gpus"):
        extra.append(", ".join(t.header["gpus"]))
    if extra:
        out.print("  " + escape("; ".join(extra)))
    for note in t.notes:
        out.print(f"  [dim]note: {escape(note)}[/dim]")
    for line in t.skipped[:5]:
        out.print(f"  [yellow]skipped {escape(line)}[/yellow]")
    if len(t.skipped) > 5:
        out.print(f"  [yellow]... and {len(t.skipped) - 5} more skipped lines[/yellow]")


def _print_fit(f) -> None:
    table = Table(title="fitted regimes: t = alpha + size x busbw-factor / B", title_justify="left")
    for column in ("from", "to", "rows", "alpha", "bus bandwidth B"):
        table.add_column(column, justify="right")
    for r in f.regimes:
        table.add_row(units.format_size(r.from_bytes), units.format_size(r.to_bytes), str(r.rows),
                      units.format_time(r.latency_s), _gb(r.busbw_GBps) + " GB/s")
    out.print(table)
    out.print(f"  peak busbw {f.peak_busbw_GBps:.2f} GB/s at {units.format_size(f.peak_size)}; n1/2 "
              f"{units.format_size(round(f.n_half_bytes)) if f.n_half_bytes else 'n/a'}; R2 (log time) {f.r2:.4f}; "
              f"row error median {100 * f.median_error:.1f} % worst {100 * f.worst_error:.1f} % "
              f"(one straight line: median {100 * f.single_median_error:.1f} %)")


LogCollective = typer.Option(None, "--collective", help="Override the collective the log is taken to be.")
LogRanks = typer.Option(None, "--ranks", "-p", help="Rank count, where the log does not say.")


@app.command("fit")
def fit_command(
    logs: list[str] = typer.Argument(..., help="Logs: nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB."),
    as_json: bool = typer.Option(False, "--json"),
    collective: Optional[str] = LogCollective, ranks: Optional[int] = LogRanks,
):
    """Fit a piecewise alpha-beta model to measured logs: regimes, peak busbw, n1/2, residuals."""
    fits = api.fit_logs(logs, collective, ranks)
    if as_json:
        docs = [f.to_json() for f in fits]
        _print_json(docs[0] if len(docs) == 1 else docs)
        return
    for t, f in zip(api.read_logs(logs, collective, ranks), fits):
        _print_table_header(t)
        _print_fit(f)
        out.print()


@app.command()
def diagnose(
    logs: list[str] = typer.Argument(..., help="One log, or several to compare side by side."),
    peak: Optional[str] = typer.Option(None, "--peak", help="Per-rank link rate busbw is judged against, e.g. 50GB/s."),
    cluster: Optional[str] = ClusterOpt, nodes: Optional[int] = Nodes,
    model_from: Optional[str] = typer.Option(None, "--model-from", help="Predict with the fit of this log instead."),
    plot: Optional[str] = typer.Option(None, "--plot", help="Write time and busbw plots (PNG/SVG)."),
    as_json: bool = typer.Option(False, "--json"),
    collective: Optional[str] = LogCollective, ranks: Optional[int] = LogRanks, profile: Optional[str] = ProfileOpt,
):
    """Is it good or bad, and why: per-size verdicts against the model and the peak, and the anomalies."""
    diagnoses = api.diagnose_logs(logs, peak, cluster, nodes, model_from, collective, ranks, profile)
    paths = _plot_paths(plot, len(diagnoses))
    for d, path in zip(diagnoses, paths):
        plot_diagnosis(d, path)
    same = len(diagnoses) > 1 and len({d.table.collective for d in diagnoses}) == 1
    comparison = api.compare_logs(diagnoses) if same else None
    if as_json:
        doc = [d.to_json() for d in diagnoses]
        _print_json({"diagnoses": doc, "comparison": comparison} if comparison else (doc[0] if len(doc) == 1 else doc))
        return
    for d in diagnoses:
        _print_diagnosis(d)
    if comparison:
        _print_comparison(diagnoses, comparison)
    for path in paths:
        out.print(f"plot written to {path}")


def _plot_paths(plot: str | None, count: int) -> list[str]:
    if not plot:
        return []
    if count == 1:
        return [plot]
    stem, dot, suffix = plot.rpartition(".")
    return [f"{stem}-{i + 1}.{suffix}" for i in range(count)]


def _print_diagnosis(d) -> None:
    _print_table_header(d.table)
    out.print(f"  peak: {escape(d.peak_source)}")
    _print_fit(d.fit)
    table = Table(title="per size", title_justify="left")
    for column in ("size", "time", "fitted", "ideal", "bound", "busbw GB/s", "eff", "bound by", "verdict"):
        table.add_column(column, justify="left" if column == "verdict" else "right", overflow="fold")
    for s in d.sizes:
        style = "red" if s.verdict.startswith("investigate") else ("green" if s.verdict == "excellent" else None)
        table.add_row(units.format_size(s.size), units.format_time(s.time_s), units.format_time(s.fitted_s),
                      units.format_time(s.ideal_s) if s.ideal_s else "-", units.format_time(s.bound_s) if s.bound_s else "-",
                      _gb(s.busbw_GBps), f"{100 * s.efficiency:.0f} %" if s.efficiency is not None else "-", s.regime,
                      s.verdict, style=style)
    out.print(table)
    if not d.findings:
        out.print("  [green]no anomalies found[/green]")
    for f in d.findings:
        color = {"error": "red", "warning": "yellow", "info": "cyan"}[f.severity]
        out.print(f"  [{color}]{f.severity}[/{color}] {f.kind}: {escape(f.message)}")
    out.print()


def _print_comparison(diagnoses, rows) -> None:
    table = Table(title="side by side (ratio: time / time of the first log)", title_justify="left")
    table.add_column("size", justify="right")
    for i, d in enumerate(diagnoses):
        name = escape(d.table.source.rsplit("/", 1)[-1])
        table.add_column(f"time [{i}] {name}", justify="right")
        table.add_column(f"busbw [{i}]", justify="right")
        if i:
            table.add_column(f"ratio [{i}]", justify="right")
    for r in rows:
        cells = [units.format_size(r["size"])]
        for i in range(len(diagnoses)):
            t = r[f"time_s_{i}"]
            cells += [units.format_time(t) if t else "-", _gb(r[f"busbw_GBps_{i}"])]
            if i:
                cells.append(f"{r[f'ratio_{i}']:.2f}" if r[f"ratio_{i}"] else "-")
        table.add_row(*cells)
    out.print(table)


@app.command("plan")
def plan_command(
    model: str = typer.Option("70b", "--model", help="Preset: 7b, 13b, 70b (or --params/--layers/--hidden/--seq-len)."),
    params: Optional[float] = typer.Option(None, "--params", help="Parameters, e.g. 70e9."),
    layers: Optional[int] = typer.Option(None, "--layers"),
    hidden: Optional[int] = typer.Option(None, "--hidden"),
    seq_len: Optional[int] = typer.Option(None, "--seq-len"),
    micro_batch: Optional[int] = typer.Option(None, "--micro-batch", help="Sequences per micro-batch."),
    dtype_bytes: Optional[int] = typer.Option(None, "--bytes", help="Bytes per parameter, gradient and activation."),
    tp: int = typer.Option(1, "--tp"), pp: int = typer.Option(1, "--pp"), dp: int = typer.Option(1, "--dp"),
    zero: int = typer.Option(0, "--zero", help="ZeRO stage 0-3."),
    sp: bool = typer.Option(False, "--sp/--no-sp", help="Sequence parallelism (TP as allgather + reducescatter)."),
    micro_batches: int = typer.Option(1, "--micro-batches", help="Micro-batches per step (per DP replica)."),
    bucket: str = typer.Option("25MB", "--bucket", help="DP gradient bucket size."),
    placement: str = typer.Option("tp-pp-dp", "--placement", help="Dimensions innermost first."),
    compute: Optional[str] = typer.Option(None, "--compute", help="Compute time per step, e.g. 2000ms."),
    flops: Optional[str] = typer.Option(None, "--flops", help="Achieved FLOP/s per rank, e.g. 400TFLOPS."),
    overlap: Optional[str] = typer.Option(None, "--overlap", help="Fractions hidden by compute, e.g. dp=0.8,tp=0."),
    algorithm: str = typer.Option("best", "--algorithm", "-A", help="Algorithm for every collective, or best."),
    compare: Optional[list[str]] = typer.Option(None, "--compare", help="Another layout or cluster to set beside: "
                                                "8x4x16, tp=8,pp=8,dp=8,zero=3, or 8x8x8@dgx-a100:64."),
    as_json: bool = typer.Option(False, "--json"),
    cluster: Optional[str] = typer.Option("dgx-h100", "--cluster", help="Cluster preset."),
    nodes: Optional[int] = Nodes, ranks_per_node: Optional[int] = Rpn,
    intra_latency: Optional[str] = IntraLat, intra_bandwidth: Optional[str] = IntraBw,
    inter_latency: Optional[str] = InterLat, inter_bandwidth: Optional[str] = InterBw, nics_per_node: Optional[int] = Nics,
    profile: Optional[str] = ProfileOpt, intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg,
):
    """Plan one training step's communication (TP, PP, DP, ZeRO) on a cluster, with overlap."""
    from dataclasses import replace as _replace
    from collperf.plan import get_model, parse_layout
    spec = get_model(model)
    custom = {"params": params, "layers": layers, "hidden": hidden, "seq_len": seq_len, "micro_batch": micro_batch}
    spec = _replace(spec, **{k: v for k, v in custom.items() if v is not None},
                    **({"param_bytes": dtype_bytes, "grad_bytes": dtype_bytes, "act_bytes": dtype_bytes}
                       if dtype_bytes else {}))
    common = dict(zero=zero, sequence_parallel=sp, micro_batches=micro_batches, bucket=bucket, placement=placement,
                  compute=compute, flops=flops, overlap=overlap, algorithm=algorithm, intra_algorithm=intra_algorithm,
                  inter_algorithm=inter_algorithm, intra_latency=intra_latency, intra_bandwidth=intra_bandwidth,
                  inter_latency=inter_latency, inter_bandwidth=inter_bandwidth, nics_per_node=nics_per_node,
                  ranks_per_node=ranks_per_node)
    plans = [api.plan_step(spec, tp, pp, dp, cluster=cluster, nodes=nodes, **common)]
    for variant in compare or []:
        layout_text, _, where = variant.partition("@")
        layout = parse_layout(layout_text, plans[0].layout)
        v_cluster, v_nodes, v_rpn = cluster, None, ranks_per_node
        if where:
            v_cluster, _, shape = where.partition(":")
            if "x" in shape:
                v_nodes, v_rpn = (int(x) for x in shape.split("x"))
            elif shape:
                v_nodes = int(shape)
        options = {**common, "zero": layout.zero, "sequence_parallel": layout.sequence_parallel,
                   "micro_batches": layout.micro_batches, "ranks_per_node": v_rpn}
        plans.append(api.plan_step(spec, layout.tp, layout.pp, layout.dp, cluster=v_cluster, nodes=v_nodes, **options))
    if as_json:
        docs = [p.to_json() for p in plans]
        _print_json(docs[0] if len(docs) == 1 else {"plans": docs, "fastest": _fastest(plans)})
        return
    for p in plans:
        _print_plan(p)
    if len(plans) > 1:
        _print_plan_comparison(plans)


def _fastest(plans) -> int:
    key = (lambda p: p.step_s) if all(p.compute_s for p in plans) else (lambda p: p.comm_s)
    return min(range(len(plans)), key=lambda i: key(plans[i]))


def _print_plan(p) -> None:
    m = p.model
    out.print(f"[bold]{m.name}[/bold] ({m.params:.3g} parameters, {m.layers} layers, hidden {m.hidden}, "
              f"activation {units.format_size(round(m.activation))} per micro-batch) as {p.layout.describe()}, "
              f"{p.layout.micro_batches} micro-batch(es), on {escape(p.cluster.describe())}")
    table = Table()
    for column in ("kind", "collective", "group", "where", "algorithm", "count", "size", "per op", "total",
                   "exposed", "share of step"):
        table.add_column(column, justify="left" if column in ("kind", "collective", "where", "algorithm") else "right")
    step = p.step_s if p.compute_s else p.comm_s
    for item in p.items:
        table.add_row(item.kind, item.collective, str(item.group_ranks), item.level, item.algorithm, str(item.count),
                      units.format_size(round(item.size_bytes)), units.format_time(item.time_per_op_s),
                      units.format_time(item.total_s), "", "")
    for kind, total in p.by_kind().items():
        exposed = p.exposed.get(kind, total)
        table.add_row(f"[bold]{kind}[/bold]", "", "", "", "", "", "", "", units.format_time(total),
                      units.format_time(exposed), f"{100 * exposed / step:.1f} %" if step else "-")
    out.print(table)
    line = f"communication {units.format_time(p.comm_s)} (dominant: {p.dominant})"
    if p.compute_s:
        line += (f"; compute {units.format_time(p.compute_s)}; exposed {units.format_time(p.exposed_s)}; step "
                 f"{units.format_time(p.step_s)}; {p.speedup:.2f}x faster than without overlap")
    out.print(line)
    out.print()


def _print_plan_comparison(plans) -> None:
    best = _fastest(plans)
    table = Table(title="side by side", title_justify="left")
    for column in ("", "layout", "cluster", "TP", "PP", "DP/ZeRO", "communication", "step"):
        table.add_column(column)
    for i, p in enumerate(plans):
        kinds = p.by_kind()
        c = p.cluster
        table.add_row("*" if i == best else "", p.layout.describe(), f"{c.name} {c.nodes}x{c.ranks_per_node}",
                      units.format_time(kinds.get("TP", 0)), units.format_time(kinds.get("PP", 0)),
                      units.format_time(kinds.get("DP", 0) + kinds.get("ZeRO", 0)), units.format_time(p.comm_s),
                      units.format_time(p.step_s) if p.compute_s else "-", style="bold green" if i == best else None)
    out.print(table)


testbed_app = typer.Typer(help="An emulated cluster on this machine: network namespaces with shaped links.",
                          no_args_is_help=True)
app.add_typer(testbed_app, name="testbed")


@testbed_app.command("up")
def testbed_up(hosts: int = typer.Option(4, "--hosts"), ranks_per_host: int = typer.Option(1, "--ranks-per-host"),
               rate: str = typer.Option("200mbit", "--rate", help="Each host's link, each way (tc spelling)."),
               name: str = typer.Option("tb0", "--name")):
    """Bring a testbed up (Linux, root, iproute2)."""
    bed = Testbed(hosts, rate, ranks_per_host, name).up()
    out.print(bed.describe())


@testbed_app.command("status")
def testbed_status(name: Optional[str] = typer.Option(None, "--name"), as_json: bool = typer.Option(False, "--json")):
    """List the testbed namespaces, their addresses, shaping and processes."""
    rows = testbed_status_of(name)
    if as_json:
        _print_json(rows)
        return
    if not rows:
        out.print("no testbed is up")
    for r in rows:
        out.print(f"{r['namespace']}: {', '.join(r['addresses'])}; shaped {r['shaping']}; {r['processes']} processes")


@testbed_app.command("down")
def testbed_down(name: Optional[str] = typer.Option(None, "--name", help="Only this testbed (default: all).")):
    """Tear testbeds down, leftovers of crashed runs included."""
    removed = testbed_down_of(name)
    out.print(f"removed {len(removed)} namespace(s)" + (": " + ", ".join(removed) if removed else ""))


TestbedOpt = typer.Option(None, "--testbed", help="hosts=4,rate=200mbit[,ranks-per-host=2]: brought up and torn down.")


@app.command("calibrate")
def calibrate_command(ranks: Optional[int] = typer.Option(None, "--ranks", "-p"), testbed: Optional[str] = TestbedOpt,
                      output: str = typer.Option("profile.json", "-o", "--output"),
                      timeout: float = typer.Option(300.0, "--timeout")):
    """Measure alpha, bandwidth (intra- and inter-host) and gamma; write a profile."""
    from collperf.calibrate import calibrate, save
    bed = parse_testbed(testbed) if testbed else None
    try:
        if bed is not None:
            with bed:
                prof = calibrate(testbed=bed, timeout_s=timeout)
        else:
            prof = calibrate(ranks, timeout_s=timeout)
    except RunError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1)
    save(prof, output)
    for level in ("intra", "inter"):
        link = prof.get(level)
        if link:
            out.print(f"{level}: alpha {units.format_time(link['latency_s'])}, bandwidth "
                      f"{units.format_bandwidth(link['bandwidth_Bps'])}")
    out.print(f"tiny-allreduce alpha {units.format_time(prof['measured']['allreduce_alpha_s'])}; reduce bandwidth "
              f"{units.format_bandwidth(prof['reduce_bandwidth_Bps'])}; profile written to {output}")


@app.command("bound")
def bound_command(collective: str = typer.Argument("allreduce"), ranks: Optional[int] = typer.Option(None, "--ranks", "-p"),
                  size: str = typer.Option("4M", "--size", "-s"), testbed: Optional[str] = TestbedOpt,
                  profile: Optional[str] = ProfileOpt, as_json: bool = typer.Option(False, "--json"),
                  timeout: float = typer.Option(300.0, "--timeout")):
    """The allreduce lower bound measured on the machine (seed 003), beside each algorithm and the model."""
    from collperf.validate import bound
    if get_collective(collective).name != "allreduce":
        raise UsageError(f"the measured lower bound is defined for allreduce (got {collective})")
    bed = parse_testbed(testbed) if testbed else None
    ranks = bed.ranks if bed else ranks
    if not ranks:
        raise UsageError("give --ranks P (or --testbed ...)")
    net = api.network(ranks=ranks, profile=profile) if profile else None
    try:
        if bed is not None:
            with bed:
                result = bound(units.parse_size(size), ranks, bed, network=net, timeout_s=timeout)
        else:
            result = bound(units.parse_size(size), ranks, network=net, timeout_s=timeout)
    except RunError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1)
    if as_json:
        _print_json(result)
        return
    m = result["measured_bound"]
    out.print(f"allreduce of {units.format_size(result['size_bytes'])} on {ranks} ranks")
    out.print(f"  measured lower bound {units.format_time(m['bound_s'])} = forwarding {m['items_per_hop']} floats over "
              f"{m['hops']} hops {units.format_time(m['forward_s'])} + reducing {units.format_time(m['compute_s'])}")
    if result.get("model_bound_s"):
        out.print(f"  model lower bound {units.format_time(result['model_bound_s'])} (from the profile)")
    for name, t in result["algorithms"].items():
        out.print(f"  {name:10s} {units.format_time(t)}  = {t / m['bound_s']:.2f} x the measured bound")


@app.command("validate")
def validate_command(testbed: Optional[list[str]] = typer.Option(None, "--testbed", help="hosts=4,rate=200mbit"
                                                                 "[,ranks-per-host=2]; repeat for several rank counts "
                                                                 "and flat/two-level shapes."),
                     ranks: Optional[int] = typer.Option(None, "--ranks", "-p"),
                     profile: Optional[str] = ProfileOpt, sizes: str = typer.Option("64K,1M,4M", "--sizes"),
                     iters: int = typer.Option(5, "-n", "--iters"), as_json: bool = typer.Option(False, "--json"),
                     plot: Optional[str] = typer.Option(None, "--plot"), timeout: float = typer.Option(600.0, "--timeout")):
    """Predict a grid of collectives from a calibrated profile alone and measure them: errors per algorithm."""
    from collperf.calibrate import calibrate, load_cluster, save
    from collperf.model.predict import Network as _Network
    from collperf.validate import summary, validate
    size_list = [units.format_size(s).replace(" ", "") for s in units.parse_sizes(sizes)]
    beds = [parse_testbed(t) for t in testbed] if testbed else [None]
    rows, described = [], []
    try:
        for bed in beds:
            if bed is not None:
                bed.up()
            try:
                bed_profile = profile
                if bed_profile is None:   # calibrate first, on the same ranks
                    bed_profile = f"validate-profile-{bed.hosts}x{bed.ranks_per_host}.json" if bed else \
                        "validate-profile.json"
                    save(calibrate(ranks, bed, timeout), bed_profile)
                cluster = load_cluster(bed_profile, bed.hosts if bed else None, bed.ranks_per_host if bed else ranks)
                net = _Network.of(cluster)
                described.append(f"{net.describe()} (profile {bed_profile})")
                rows += validate(net, bed, None if bed else ranks, size_list, iters=iters, timeout_s=timeout)
            finally:
                if bed is not None:
                    bed.down()
    except RunError as e:
        err.print(f"[red]error:[/red] {e}")
        raise typer.Exit(1)
    table_rows = summary(rows)
    if plot:
        plot_validation(rows, plot)
    if as_json:
        _print_json({"networks": described, "summary": table_rows, "rows": [{**vars(r), "error": r.error} for r in rows]})
        return
    for text in described:
        out.print(f"validated on {escape(text)}")
    table = Table()
    for column in ("collective", "algorithm", "ranks", "regime", "rows", "median |error|", "worst |error|", "worst at"):
        table.add_column(column)
    for r in table_rows:
        table.add_row(r["collective"], r["algorithm"], str(r["ranks"]), r["regime"], str(r["rows"]),
                      f"{100 * r['median_abs_error']:.1f} %",
                      f"{100 * r['worst_signed_error']:+.1f} %", units.format_size(r["worst_size"]))
    out.print(table)


def main() -> None:
    # SIGTERM unwinds like Ctrl-C, so that ranks are killed and testbeds torn down on the way out
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        # without standalone mode click returns the exit code of typer.Exit instead of raising it
        code = app(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except UsageError as e:
        err.print(f"[red]error:[/red] {e}")
        sys.exit(2)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # the command-line parser's own usage errors (click's, vendored by typer)
        if hasattr(e, "show") and hasattr(e, "exit_code"):
            e.show()
            sys.exit(e.exit_code)
        if type(e).__name__ == "Abort":
            sys.exit(130)
        raise


if __name__ == "__main__":
    main()
