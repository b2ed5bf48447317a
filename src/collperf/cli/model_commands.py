"""Commands over the model and the schedules: predict, crossover, algorithms, schedule, verify, simulate."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render, render_blink, render_logs
from collperf.cli.options import (
    command,
    Collective,
    field_option,
    flag,
    Hybrid,
    InterAlg,
    IntraAlg,
    Json,
    network_options,
    spec_options,
    TDpa,
    Transit,
)
from collperf.cli.render import out, print_json
from collperf.cli.sim_watch import SimulationWatch
from collperf.spec import (
    crossover_request,
    CrossoverSpec,
    HardwareSpec,
    NCCL_VIEW,
    NcclCrossoverSpec,
    NcclPredictSpec,
    NetworkSpec,
    output_path,
    PatternSpec,
    predict_request,
    PredictSpec,
    ScheduleSpec,
    SimulateSpec,
    simulate_request,
    TopologyPredictSpec,
    VerifySpec,
)


_TOPOLOGY = "Topology (--topology)"


@command()
@network_options(exclude=("ranks",))
@spec_options(HardwareSpec, "nccl_view", only=NCCL_VIEW, panel="NCCL (--nccl)", build=False)
def predict(
    collective: str = Collective,
    size: str = field_option(PredictSpec, "size"),
    algorithm: str = field_option(PredictSpec, "algorithm"),
    segments: Optional[int] = field_option(PredictSpec, "segments"),
    nccl: bool = flag(
        False,
        "--nccl",
        help="NCCL's own choice per size on a catalogue system (--cluster, "
        "--nodes): algorithm/protocol, time, busbw and the runner-up.",
    ),
    as_json: bool = Json,
    intra_algorithm: str = IntraAlg,
    inter_algorithm: str = InterAlg,
    ranks: Optional[str] = typer.Option(
        None,
        "--ranks",
        "-p",
        rich_help_panel="Network",
        help=("Number of ranks (with --latency/--bandwidth); with --topology the group of GPUs, e.g. 0,1,2."),
    ),
    topology: Optional[str] = field_option(TopologyPredictSpec, "topology", _TOPOLOGY, default=None),
    root: Optional[int] = field_option(TopologyPredictSpec, "root", _TOPOLOGY),
    hybrid: bool = Hybrid(_TOPOLOGY),
    t_dpa: str = TDpa(_TOPOLOGY),
    transit: str = Transit(_TOPOLOGY),
    sharp: Optional[bool] = field_option(PredictSpec, "sharp", "Network"),
    nccl_view: dict = None,
    network: NetworkSpec = None,
):
    """Predict the time of COLLECTIVE for every algorithm, with its terms, bandwidths and lower bound.
    With --cluster: NCCL's expected band and the system's bound beside them (--sharp: with in-network reduction).
    With --topology: Blink's packed trees (-A blink, --hybrid) or the closed forms on a switch's link."""
    spec = predict_request(
        collective=collective,
        size=size,
        algorithm=algorithm,
        segments=segments,
        nccl=nccl,
        intra_algorithm=intra_algorithm,
        inter_algorithm=inter_algorithm,
        ranks=ranks,
        topology=topology,
        root=root,
        hybrid=hybrid,
        t_dpa=t_dpa,
        transit=transit,
        sharp=sharp,
        network=network,
        **nccl_view,
    )
    result = api.predict(spec)
    if as_json:
        print_json(result.to_json())
    elif isinstance(spec, TopologyPredictSpec):
        render_blink.print_topology_prediction(result)
    elif isinstance(spec, NcclPredictSpec):
        render_logs.print_nccl_prediction(*result, result.model_note)
    else:
        render.print_predictions(result)
        if result.bands:
            render_logs.print_expected_bands(result.assumed, result.bands)


@command()
@network_options()
@spec_options(CrossoverSpec, "fields", exclude=("network",), build=False)
@spec_options(HardwareSpec, "nccl_view", only=NCCL_VIEW, panel="NCCL (--nccl)", build=False)
def crossover(
    nccl: bool = flag(
        False,
        "--nccl",
        help="Where NCCL's own choice of algorithm/protocol changes on a "
        "catalogue system (--cluster, --nodes), exact to the byte for NCCL's model.",
    ),
    sharp: Optional[bool] = field_option(HardwareSpec, "sharp", "NCCL (--nccl)"),
    as_json: bool = Json,
    fields: dict = None,
    nccl_view: dict = None,
    network: NetworkSpec = None,
):
    """Where the best algorithm for COLLECTIVE changes with the size (--nccl: where NCCL's own choice changes)."""
    spec = crossover_request(nccl=nccl, sharp=sharp, network=network, **fields, **nccl_view)
    if isinstance(spec, NcclCrossoverSpec):
        result = api.crossover_nccl(spec)
        print_json(result.to_json()) if as_json else render_logs.print_nccl_crossover(*result)
        return
    result = api.crossover(spec)
    print_json(result.to_json()) if as_json else render.print_crossover(
        result.collective, result.network, result.ranges
    )


@command()
def algorithms(collective: Optional[str] = typer.Argument(None, help="Only this collective."), as_json: bool = Json):
    """List every collective and algorithm with its cost formula and source."""
    rows = api.algorithms(collective)
    print_json(rows.to_json()) if as_json else render.print_algorithms(rows)


@command()
@spec_options(ScheduleSpec, "spec")
def schedule(
    max_steps: int = typer.Option(64, "--max-steps", help="Print at most this many steps."),
    as_json: bool = Json,
    spec: ScheduleSpec = None,
):
    """Print an algorithm's schedule: who sends which chunks to whom at each step (-> copy, +> reduce)."""
    result = api.verified_schedule(spec)
    if as_json:
        print_json(result.to_json())
    else:
        render.print_schedule(result.schedule, result.coefficients, max_steps)


@command("verify")
@spec_options(VerifySpec, "spec")
def verify_command(as_json: bool = Json, spec: VerifySpec = None):
    """Symbolically verify every schedule for every rank count up to --max-ranks."""
    rows = api.verify_all(spec)
    print_json(rows.to_json()) if as_json else render.print_verification(rows, spec.min_ranks, spec.max_ranks)
    if rows.failed:
        raise typer.Exit(1)


_BLINK, _PATTERN = "Blink (-A blink)", "Micro-benchmarks (--pattern)"


@command()
@network_options(exclude=("ranks", "nodes", "ranks_per_node"))
def simulate(
    collective: Optional[str] = field_option(SimulateSpec, "collective", default=None),
    algorithm: Optional[str] = field_option(SimulateSpec, "algorithm", default=None),
    size: Optional[str] = field_option(SimulateSpec, "size", default=None),
    topology: str = field_option(SimulateSpec, "topology"),
    mode: str = field_option(SimulateSpec, "mode"),
    memory_limit: Optional[str] = field_option(SimulateSpec, "memory_limit"),
    engine: str = field_option(SimulateSpec, "engine"),
    segments: Optional[int] = field_option(SimulateSpec, "segments"),
    root: Optional[int] = field_option(SimulateSpec, "root"),
    timeline: Optional[str] = typer.Option(None, "--timeline", help="Write a per-step timeline (PNG/SVG)."),
    as_json: bool = Json,
    intra_algorithm: Optional[str] = field_option(SimulateSpec, "intra_algorithm"),
    inter_algorithm: Optional[str] = field_option(SimulateSpec, "inter_algorithm"),
    ranks: Optional[str] = field_option(SimulateSpec, "ranks", _BLINK),
    hybrid: bool = Hybrid(_BLINK),
    t_dpa: str = TDpa(_BLINK),
    transit: str = Transit(_BLINK),
    pattern: Optional[str] = field_option(PatternSpec, "pattern", _PATTERN, default=None),
    gpus: Optional[str] = field_option(PatternSpec, "gpus", _PATTERN),
    center: Optional[int] = field_option(PatternSpec, "center", _PATTERN),
    successor: Optional[int] = field_option(PatternSpec, "successor", _PATTERN),
    source: Optional[int] = field_option(PatternSpec, "source", _PATTERN),
    network: NetworkSpec = None,
):
    """Simulate an algorithm's schedule on a topology: time, bandwidths, per-step times, busiest links.
    With --pattern: one of Blink's micro-benchmarks, throughput vs size."""
    spec = simulate_request(
        collective=collective,
        algorithm=algorithm,
        topology=topology,
        size=size,
        mode=mode,
        segments=segments,
        root=root,
        intra_algorithm=intra_algorithm,
        inter_algorithm=inter_algorithm,
        network=network,
        ranks=ranks,
        hybrid=hybrid,
        t_dpa=t_dpa,
        transit=transit,
        memory_limit=memory_limit,
        engine=engine,
        timeline=timeline,
        pattern=pattern,
        gpus=gpus,
        center=center,
        successor=successor,
        source=source,
    )
    if isinstance(spec, PatternSpec):
        run = api.simulate(spec)
        print_json(run.to_json()) if as_json else render_blink.print_pattern(run)
        return
    output_path(timeline, "--timeline")
    watch = SimulationWatch(mode, as_json)
    try:
        sims = api.simulate(spec, watch.progress, watch.estimate)
    finally:
        watch.close()
    if timeline:
        render.plot_timeline(sims[-1], timeline)
    if as_json:
        print_json(sims.to_json())
        return
    for sim in sims:
        render.print_simulation(sim)
    if timeline:
        out.print(f"timeline of the {sims[-1].result.size_bytes:.0f}-byte run written to {timeline}")
