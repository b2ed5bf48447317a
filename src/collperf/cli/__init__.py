"""The command line: options -> spec -> one API call -> render. No logic lives here that the API lacks."""

from __future__ import annotations

import signal
import sys
from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import network_options
from collperf.cli.render import err, out, print_json
from collperf.errors import RunError, UsageError
from collperf.spec import BenchSpec, DiagnoseSpec, LogSpec, NetworkSpec, PlanSpec, SimulateSpec, SweepSpec

app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="Performance of collective communication: predict, explain, compare.")

Collective = typer.Argument(..., help="allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter, "
                                      "gather or sendrecv.")
Json = typer.Option(False, "--json", help="Print one JSON document to stdout.")
IntraAlg = typer.Option("best", "--intra-algorithm", help="Algorithm of the intra-node phases (or best).")
InterAlg = typer.Option("best", "--inter-algorithm", help="Algorithm of the inter-node phase (or best).")
TestbedOpt = typer.Option(None, "--testbed", help="hosts=4,rate=200mbit[,ranks-per-host=2]: brought up and torn down.")
Timeout = typer.Option(300.0, "--timeout", help="Seconds before the whole run is stopped.")


def _one_or_many(docs: list):
    return docs[0] if len(docs) == 1 else docs


@app.command()
@network_options()
def predict(collective: str = Collective,
            size: str = typer.Option("1M,64M,1G", "--size", "-s", help="Sizes (nccl-tests convention), comma list."),
            algorithm: str = typer.Option("all", "--algorithm", "-A", help="An algorithm, a comma list, or all."),
            segments: Optional[int] = typer.Option(None, "--segments", help="Pipeline segments for chain/"
                                                   "double-binary-tree (default: the best per size)."),
            as_json: bool = Json, intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg,
            network: NetworkSpec = None):
    """Predict the time of COLLECTIVE for every algorithm, with its terms, bandwidths and lower bound."""
    results = api.predict(collective, size, network, algorithm, intra_algorithm, inter_algorithm, segments)
    print_json(_one_or_many([r.to_json() for r in results])) if as_json else render.print_predictions(results)


@app.command()
@network_options()
def crossover(collective: str = Collective, min_size: str = typer.Option("1", "--min", help="Smallest size."),
              max_size: str = typer.Option("16G", "--max", help="Largest size."),
              algorithm: str = typer.Option("all", "--algorithm", "-A", help="Restrict to these (comma list)."),
              as_json: bool = Json, intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg,
              network: NetworkSpec = None):
    """Where the best algorithm for COLLECTIVE changes with the size."""
    net = network.resolve()
    found, ranges = api.crossover(collective, net, min_size, max_size, algorithm, intra_algorithm, inter_algorithm)
    if as_json:
        print_json({"collective": collective, "ranks": net.ranks, "network": net.describe(),
                    "crossovers": [vars(c) for c in found], "regimes": [vars(r) for r in ranges]})
    else:
        render.print_crossover(collective, net, ranges)


@app.command()
def algorithms(collective: Optional[str] = typer.Argument(None, help="Only this collective."), as_json: bool = Json):
    """List every collective and algorithm with its cost formula and source."""
    rows = api.algorithms(collective)
    print_json([render.algorithm_json(a) for a in rows]) if as_json else render.print_algorithms(rows)


@app.command()
def schedule(collective: str = Collective,
             algorithm: str = typer.Option(..., "--algorithm", "-A", help="An algorithm of the collective, or "
                                                                          "hierarchical."),
             ranks: Optional[int] = typer.Option(None, "--ranks", "-p"), root: int = typer.Option(0, "--root"),
             segments: int = typer.Option(1, "--segments", help="Pipeline segments (chain, double-binary-tree)."),
             nodes: Optional[int] = typer.Option(None, "--nodes", help="hierarchical: nodes."),
             ranks_per_node: Optional[int] = typer.Option(None, "--ranks-per-node", help="hierarchical: ranks per node."),
             intra_algorithm: Optional[str] = typer.Option(None, "--intra-algorithm"),
             inter_algorithm: Optional[str] = typer.Option(None, "--inter-algorithm"),
             max_steps: int = typer.Option(64, "--max-steps", help="Print at most this many steps."),
             as_json: bool = Json):
    """Print an algorithm's schedule: who sends which chunks to whom at each step (-> copy, +> reduce)."""
    s, coefficients = api.verified_schedule(collective, algorithm, ranks, root, segments, nodes, ranks_per_node,
                                            intra_algorithm, inter_algorithm)
    if as_json:
        print_json(render.schedule_json(s, coefficients))
    else:
        render.print_schedule(s, coefficients, max_steps)


@app.command("verify")
def verify_command(collective: Optional[str] = typer.Option(None, "--collective", "-c"),
                   algorithm: Optional[str] = typer.Option(None, "--algorithm", "-A"),
                   max_ranks: int = typer.Option(64, "--max-ranks"), min_ranks: int = typer.Option(1, "--min-ranks"),
                   as_json: bool = Json):
    """Symbolically verify every schedule for every rank count up to --max-ranks."""
    rows = api.verify_all(collective, algorithm, max_ranks, min_ranks)
    print_json([vars(r) for r in rows]) if as_json else render.print_verification(rows, min_ranks, max_ranks)
    if any(r.failures for r in rows):
        raise typer.Exit(1)


@app.command()
@network_options(exclude=("ranks", "nodes", "ranks_per_node"))
def simulate(collective: str = Collective, algorithm: str = typer.Option(..., "--algorithm", "-A"),
             size: str = typer.Option("1G", "--size", "-s"),
             topology: str = typer.Option(..., "--topology", "-t",
                                          help="dgx1v | dgx2 | mesh:P | switch:P | ring:P | cluster:NxG | file.json"),
             mode: str = typer.Option("rounds", "--mode", help="rounds (fast) or events (congestion-aware)."),
             segments: int = typer.Option(1, "--segments"), root: int = typer.Option(0, "--root"),
             timeline: Optional[str] = typer.Option(None, "--timeline", help="Write a per-step timeline (PNG/SVG)."),
             as_json: bool = Json, intra_algorithm: Optional[str] = typer.Option(None, "--intra-algorithm"),
             inter_algorithm: Optional[str] = typer.Option(None, "--inter-algorithm"), network: NetworkSpec = None):
    """Simulate an algorithm's schedule on a topology: time, bandwidths, per-step times, busiest links."""
    sim = api.simulate(SimulateSpec(collective, algorithm, topology, size, mode, segments, root, intra_algorithm,
                                    inter_algorithm, network))
    if timeline:
        render.plot_timeline(sim, timeline)
    print_json(render.simulation_json(sim)) if as_json else render.print_simulation(sim)
    if timeline and not as_json:
        out.print(f"timeline written to {timeline}")


@app.command()
@network_options(only=("latency", "bandwidth", "reduce_bandwidth", "cluster", "nodes", "profile"))
def bench(collective: str = typer.Option("allreduce", "--collective", help="The collective to measure."),
          algorithm: str = typer.Option("builtin", "--algorithm", "-A", help="Comma list: ours and/or builtin."),
          ranks: Optional[int] = typer.Option(None, "--ranks", "-p", help="Local processes (ignored under torchrun)."),
          min_bytes: str = typer.Option("1K", "-b", "--minbytes", help="Smallest size (nccl-tests convention)."),
          max_bytes: str = typer.Option("1M", "-e", "--maxbytes", help="Largest size."),
          factor: int = typer.Option(2, "-f", "--stepfactor", help="Multiplicative step (0/1: use -i)."),
          step_bytes: str = typer.Option("1M", "-i", "--stepbytes", help="Additive step when -f is not > 1."),
          iters: int = typer.Option(20, "-n", "--iters", help="Timed iterations per size."),
          warmup: int = typer.Option(5, "-w", "--warmup_iters", help="Untimed warm-up iterations."),
          dtype: str = typer.Option("float32", "-d", "--dtype", help="float32 float64 float16 bfloat16 int32 int64."),
          op: str = typer.Option("sum", "-o", "--op", help="sum prod min max avg."), root: int = typer.Option(0, "-r", "--root"),
          check: int = typer.Option(1, "-c", "--check", help="Correctness-check iterations per size (0: off)."),
          average: int = typer.Option(1, "-a", "--average", help="Combine ranks' times: 0 rank 0, 1 mean, 2 min, 3 max."),
          segments: int = typer.Option(1, "--segments", help="Pipeline segments of chain/double-binary-tree."),
          slice_bytes: str = typer.Option("1M", "--slice-bytes", help="Messages are cut into slices of this size."),
          in_place: bool = typer.Option(True, "--in-place/--no-in-place", help="Also time in-place."),
          timeout: float = Timeout,
          json_path: Optional[str] = typer.Option(None, "--json", help="Write nccl-tests -J JSON (plus our fields)."),
          csv_path: Optional[str] = typer.Option(None, "--csv", help="Write a flat CSV table."),
          testbed: Optional[str] = TestbedOpt, network: NetworkSpec = None):
    """Measure collectives on real processes (gloo locally, NCCL under torchrun with GPUs), nccl-tests style,
    each row beside the model's prediction."""
    sweep = SweepSpec(collective, algorithm, min_bytes, max_bytes, factor, step_bytes, iters, warmup, dtype, op,
                      root, check, average, segments, slice_bytes, in_place)
    results = api.bench(BenchSpec(sweep, ranks, timeout, network, testbed))
    if results is None:   # a torchrun rank other than 0
        return
    sys.stdout.write(render.bench_text(results))
    render.write_results(results, json_path, csv_path)
    if results.wrong_rows():
        err.print(f"[red]{results.wrong_rows()} test(s) had wrong results: their times are not to be trusted[/red]")
        raise typer.Exit(1)


LogCollective = typer.Option(None, "--collective", help="Override the collective the log is taken to be.")
LogRanks = typer.Option(None, "--ranks", "-p", help="Rank count, where the log does not say.")


@app.command("fit")
def fit_command(logs: list[str] = typer.Argument(..., help="Logs: nccl-tests text/JSON, collperf JSON/CSV, OSU, IMB."),
                as_json: bool = Json, collective: Optional[str] = LogCollective, ranks: Optional[int] = LogRanks):
    """Fit a piecewise alpha-beta model to measured logs: regimes, peak busbw, n1/2, residuals."""
    tables = api.read_logs(LogSpec(logs, collective, ranks))
    fits = api.fit_tables(tables)
    if as_json:
        print_json(_one_or_many([f.to_json() for f in fits]))
        return
    for t, f in zip(tables, fits):
        render.print_table_header(t)
        render.print_fit(f)
        out.print()


@app.command()
@network_options(only=("cluster", "nodes", "profile"))
def diagnose(logs: list[str] = typer.Argument(..., help="One log, or several to compare side by side."),
             peak: Optional[str] = typer.Option(None, "--peak", help="Per-rank link rate busbw is judged against, "
                                                                     "e.g. 50GB/s."),
             model_from: Optional[str] = typer.Option(None, "--model-from", help="Predict with this log's fit instead."),
             plot: Optional[str] = typer.Option(None, "--plot", help="Write time and busbw plots (PNG/SVG)."),
             as_json: bool = Json, collective: Optional[str] = LogCollective, ranks: Optional[int] = LogRanks,
             network: NetworkSpec = None):
    """Is it good or bad, and why: per-size verdicts against the model and the peak, and the anomalies."""
    diagnoses = api.diagnose_logs(DiagnoseSpec(LogSpec(logs, collective, ranks), peak, network, model_from))
    paths = render.plot_diagnoses(diagnoses, plot) if plot else []
    same = len(diagnoses) > 1 and len({d.table.collective for d in diagnoses}) == 1
    comparison = api.compare_logs(diagnoses) if same else None
    if as_json:
        docs = [d.to_json() for d in diagnoses]
        print_json({"diagnoses": docs, "comparison": comparison} if comparison else _one_or_many(docs))
        return
    for d in diagnoses:
        render.print_diagnosis(d)
    if comparison:
        render.print_comparison(diagnoses, comparison)
    for path in paths:
        out.print(f"plot written to {path}")


@app.command("plan")
@network_options(exclude=("ranks", "latency", "bandwidth", "reduce_bandwidth", "cluster"))
def plan_command(
    model: str = typer.Option("70b", "--model", help="Preset: 7b, 13b, 70b (or --params/--layers/--hidden/--seq-len)."),
    params: Optional[float] = typer.Option(None, "--params", help="Parameters, e.g. 70e9."),
    layers: Optional[int] = typer.Option(None, "--layers"), hidden: Optional[int] = typer.Option(None, "--hidden"),
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
    as_json: bool = Json, cluster: Optional[str] = typer.Option("dgx-h100", "--cluster", help="Cluster preset."),
    intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg, network: NetworkSpec = None,
):
    """Plan one training step's communication (TP, PP, DP, ZeRO) on a cluster, with overlap."""
    spec = api.plan_spec(model, dict(params=params, layers=layers, hidden=hidden, seq_len=seq_len,
                                     micro_batch=micro_batch, dtype_bytes=dtype_bytes),
                         dict(tp=tp, pp=pp, dp=dp, zero=zero, sequence_parallel=sp, micro_batches=micro_batches,
                              bucket=bucket, placement=placement),
                         network, cluster, compute=compute, flops=flops, overlap=overlap, algorithm=algorithm,
                         intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm)
    plans, best = api.plan_compare(spec, compare or [])
    if as_json:
        docs = [p.to_json() for p in plans]
        print_json(docs[0] if len(docs) == 1 else {"plans": docs, "fastest": best})
    else:
        render.print_plans(plans, best)


testbed_app = typer.Typer(help="An emulated cluster on this machine: network namespaces with shaped links.",
                          no_args_is_help=True)
app.add_typer(testbed_app, name="testbed")


@testbed_app.command("up")
def testbed_up(hosts: int = typer.Option(4, "--hosts"), ranks_per_host: int = typer.Option(1, "--ranks-per-host"),
               rate: str = typer.Option("200mbit", "--rate", help="Each host's link, each way (tc spelling)."),
               name: str = typer.Option("tb0", "--name")):
    """Bring a testbed up (Linux, root, iproute2)."""
    out.print(api.testbed_start(f"hosts={hosts},rate={rate},ranks-per-host={ranks_per_host},name={name}").describe())


@testbed_app.command("status")
def testbed_status(name: Optional[str] = typer.Option(None, "--name"), as_json: bool = Json):
    """List the testbed namespaces, their addresses, shaping and processes."""
    rows = api.testbed_status(name)
    print_json(rows) if as_json else render.print_testbed_status(rows)


@testbed_app.command("down")
def testbed_down(name: Optional[str] = typer.Option(None, "--name", help="Only this testbed (default: all).")):
    """Tear testbeds down, leftovers of crashed runs included."""
    removed = api.testbed_down(name)
    out.print(f"removed {len(removed)} namespace(s)" + (": " + ", ".join(removed) if removed else ""))


@app.command("calibrate")
def calibrate_command(ranks: Optional[int] = typer.Option(None, "--ranks", "-p"), testbed: Optional[str] = TestbedOpt,
                      output: str = typer.Option("profile.json", "-o", "--output"), timeout: float = Timeout):
    """Measure alpha, bandwidth (intra- and inter-host) and gamma; write a profile."""
    render.print_profile(api.calibrate(ranks, testbed, timeout, output), output)


@app.command("bound")
def bound_command(collective: str = typer.Argument("allreduce"), ranks: Optional[int] = typer.Option(None, "--ranks", "-p"),
                  size: str = typer.Option("4M", "--size", "-s"), testbed: Optional[str] = TestbedOpt,
                  profile: Optional[str] = typer.Option(None, "--profile", help="A calibrated profile, for the "
                                                        "model's bound beside the measured one."),
                  as_json: bool = Json, timeout: float = Timeout):
    """The allreduce lower bound measured on the machine (Patarasuk and Yuan's bandwidth-optimal bound, run
    as a forwarding chain), beside each algorithm and the model."""
    result = api.bound(collective, ranks, size, testbed, profile, timeout)
    print_json(result) if as_json else render.print_bound(result)


@app.command("validate")
def validate_command(testbed: Optional[list[str]] = typer.Option(None, "--testbed", help="hosts=4,rate=200mbit"
                                                                 "[,ranks-per-host=2]; repeat for several rank counts "
                                                                 "and flat/two-level shapes."),
                     ranks: Optional[int] = typer.Option(None, "--ranks", "-p"),
                     profile: Optional[str] = typer.Option(None, "--profile", help="Use this profile instead of "
                                                           "calibrating first."),
                     sizes: str = typer.Option("64K,1M,4M", "--sizes"), iters: int = typer.Option(5, "-n", "--iters"),
                     as_json: bool = Json, plot: Optional[str] = typer.Option(None, "--plot"),
                     timeout: float = typer.Option(600.0, "--timeout")):
    """Predict a grid of collectives from a calibrated profile alone and measure them: errors per algorithm."""
    result = api.validate(testbed or [], ranks, profile, sizes, iters, timeout)
    if plot:
        render.plot_validation(result, plot)
    print_json(render.validation_json(result)) if as_json else render.print_validation(result)


def main() -> None:
    # SIGTERM unwinds like Ctrl-C, so that ranks are killed and testbeds torn down on the way out
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    try:
        # without standalone mode click returns the exit code of typer.Exit instead of raising it
        code = app(standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except UsageError as e:
        err.print(f"[red]error:[/red] {render.escape(str(e))}")
        sys.exit(2)
    except RunError as e:
        err.print(f"[red]error:[/red] {render.escape(str(e))}")
        sys.exit(1)
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
