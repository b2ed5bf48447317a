"""Commands over the model and the schedules: predict, crossover, algorithms, schedule, verify, simulate."""

from __future__ import annotations

from dataclasses import replace
from typing import Optional

import typer

from collperf import api
from collperf.cli import render, render_blink, render_logs
from collperf.cli.options import (command, Collective, field_option, flag, Hybrid, InterAlg, IntraAlg, Json,
                                  network_options, spec_options, TDpa, Transit)
from collperf.cli.render import out, print_json
from collperf.cli.sim_watch import SimulationWatch
from collperf.errors import UsageError
from collperf.spec import (CrossoverSpec, HardwareSpec, NCCL_VIEW, NcclCrossoverSpec, NcclPredictSpec, NetworkSpec, output_path,
                           PatternSpec, predict_network, PredictSpec, ScheduleSpec, SimulateSpec, TopologyPredictSpec, VerifySpec)


_TOPOLOGY = "Topology (--topology)"


@command()
@network_options(exclude=("ranks",))
@spec_options(HardwareSpec, "nccl_view", only=NCCL_VIEW, panel="NCCL (--nccl)", build=False)
def predict(collective: str = Collective,
            size: str = field_option(PredictSpec, "size"), algorithm: str = field_option(PredictSpec, "algorithm"),
            segments: Optional[int] = field_option(PredictSpec, "segments"),
            nccl: bool = flag(False, "--nccl", help="NCCL's own choice per size on a catalogue system (--cluster, "
                              "--nodes): algorithm/protocol, time, busbw and the runner-up."),
            as_json: bool = Json, intra_algorithm: str = IntraAlg, inter_algorithm: str = InterAlg,
            ranks: Optional[str] = typer.Option(None, "--ranks", "-p", rich_help_panel="Network", help=(
                "Number of ranks (with --latency/--bandwidth); with --topology the group of GPUs, e.g. 0,1,2.")),
            topology: Optional[str] = field_option(TopologyPredictSpec, "topology", _TOPOLOGY, default=None),
            root: Optional[int] = field_option(TopologyPredictSpec, "root", _TOPOLOGY),
            hybrid: bool = Hybrid(_TOPOLOGY), t_dpa: str = TDpa(_TOPOLOGY), transit: str = Transit(_TOPOLOGY),
            sharp: Optional[bool] = field_option(PredictSpec, "sharp", "Network"),
            nccl_view: dict = None, network: NetworkSpec = None):
    """Predict the time of COLLECTIVE for every algorithm, with its terms, bandwidths and lower bound.
    With --cluster: NCCL's expected band and the system's bound beside them (--sharp: with in-network reduction).
    With --topology: Blink's packed trees (-A blink, --hybrid) or the closed forms on a switch's link."""
    _nccl_only("predict", nccl, nccl_view)
    if topology is not None:
        if nccl:
            raise UsageError("--nccl prices NCCL on a catalogue system (--cluster): drop --topology or --nccl")
        if sharp is not None:
            raise UsageError(f"--{'' if sharp else 'no-'}sharp describes a catalogue system's InfiniBand switches "
                             "(--cluster): drop --topology or --sharp")
        result = api.predict_topology(TopologyPredictSpec(collective=collective, topology=topology, algorithm=algorithm,
                                                          size=size, ranks=ranks, root=root, hybrid=hybrid,
                                                          t_dpa=t_dpa, transit=transit, network=network))
        print_json(result.to_json()) if as_json else render_blink.print_topology_prediction(result)
        return
    network = predict_network(network, ranks, root, hybrid, t_dpa, transit)
    if nccl:
        hardware = _nccl_hardware("predict", network, sharp, nccl_view)
        choice = api.predict_nccl(NcclPredictSpec(collective=collective, size=size, ranks=network.ranks,
                                                  hardware=hardware))
        print_json(choice.to_json()) if as_json else render_logs.print_nccl_prediction(*choice, choice.model_note)
        return
    results = api.predict(PredictSpec(collective=collective, size=size, network=network, algorithm=algorithm,
                                      intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm,
                                      segments=segments, expected=network.cluster is not None, sharp=sharp))
    if as_json:
        print_json(results.to_json())
        return
    render.print_predictions(results)
    if results.bands:
        render_logs.print_expected_bands(results.assumed, results.bands)


def _nccl_only(command_name: str, nccl: bool, nccl_view: dict) -> None:
    """The options of what NCCL sees (--cpu-arch, --nic-path, --proto, --algo) go with --nccl alone."""
    given = [name for name, value in nccl_view.items() if value is not None]
    if given and not nccl:
        raise UsageError(f"--{given[0].replace('_', '-')} describes what NCCL sees: it applies to {command_name} "
                         "--nccl; add --nccl (or drop it)")


def _nccl_hardware(command_name: str, network: NetworkSpec, sharp: Optional[bool], nccl_view: dict) -> HardwareSpec:
    """The catalogue system NCCL is priced on, from the network options and NCCL's view of it."""
    if network.cluster is None and network.profile is None:
        raise UsageError(f"{command_name} --nccl needs a system: --cluster dgx-a100|dgx-h100|dgx-b200|dgx-1v|dgx-2|"
                         "pcie-p2p|pcie-2080ti|pcie-t4 (with --nodes; `collperf systems` lists them all)")
    return replace(HardwareSpec.from_network(network), sharp=sharp, **nccl_view)


@command()
@network_options()
@spec_options(CrossoverSpec, "fields", exclude=("network",), build=False)
@spec_options(HardwareSpec, "nccl_view", only=NCCL_VIEW, panel="NCCL (--nccl)", build=False)
def crossover(nccl: bool = flag(False, "--nccl", help="Where NCCL's own choice of algorithm/protocol changes on a "
                                "catalogue system (--cluster, --nodes), exact to the byte for NCCL's model."),
              sharp: Optional[bool] = field_option(HardwareSpec, "sharp", "NCCL (--nccl)"),
              as_json: bool = Json, fields: dict = None, nccl_view: dict = None, network: NetworkSpec = None):
    """Where the best algorithm for COLLECTIVE changes with the size (--nccl: where NCCL's own choice changes)."""
    _nccl_only("crossover", nccl, nccl_view)
    if nccl:
        ours = [flag_name for flag_name, name, default in (("-A", "algorithm", "all"),
                                                            ("--intra-algorithm", "intra_algorithm", "best"),
                                                            ("--inter-algorithm", "inter_algorithm", "best"))
                if fields[name] != default]
        if ours:
            raise UsageError(f"{', '.join(ours)}: these pick among our algorithms, while crossover --nccl gives NCCL's "
                             "own choice; drop them (restrict NCCL with --algo/--proto, as NCCL_ALGO/NCCL_PROTO do)")
        hardware = _nccl_hardware("crossover", network, sharp, nccl_view)
        result = api.crossover_nccl(NcclCrossoverSpec(collective=fields["collective"], min_size=fields["min_size"],
                                                      max_size=fields["max_size"], hardware=hardware,
                                                      ranks=network.ranks))
        print_json(result.to_json()) if as_json else render_logs.print_nccl_crossover(*result)
        return
    if sharp is not None:
        raise UsageError(f"--{'' if sharp else 'no-'}sharp describes a catalogue system's InfiniBand switches, which "
                         "NCCL prices: add --nccl (our algorithms reduce on the GPUs)")
    result = api.crossover(CrossoverSpec(network=network.resolve(), **fields))
    print_json(result.to_json()) if as_json else render.print_crossover(result.collective, result.network,
                                                                         result.ranges)


@command()
def algorithms(collective: Optional[str] = typer.Argument(None, help="Only this collective."), as_json: bool = Json):
    """List every collective and algorithm with its cost formula and source."""
    rows = api.algorithms(collective)
    print_json(rows.to_json()) if as_json else render.print_algorithms(rows)


@command()
@spec_options(ScheduleSpec, "spec")
def schedule(max_steps: int = typer.Option(64, "--max-steps", help="Print at most this many steps."),
             as_json: bool = Json, spec: ScheduleSpec = None):
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
def simulate(collective: Optional[str] = field_option(SimulateSpec, "collective", default=None),
             algorithm: Optional[str] = field_option(SimulateSpec, "algorithm", default=None),
             size: Optional[str] = field_option(SimulateSpec, "size", default=None),
             topology: str = field_option(SimulateSpec, "topology"), mode: str = field_option(SimulateSpec, "mode"),
             memory_limit: Optional[str] = field_option(SimulateSpec, "memory_limit"),
             engine: str = field_option(SimulateSpec, "engine"),
             segments: Optional[int] = field_option(SimulateSpec, "segments"),
             root: Optional[int] = field_option(SimulateSpec, "root"),
             timeline: Optional[str] = typer.Option(None, "--timeline", help="Write a per-step timeline (PNG/SVG)."),
             as_json: bool = Json, intra_algorithm: Optional[str] = field_option(SimulateSpec, "intra_algorithm"),
             inter_algorithm: Optional[str] = field_option(SimulateSpec, "inter_algorithm"),
             ranks: Optional[str] = field_option(SimulateSpec, "ranks", _BLINK),
             hybrid: bool = Hybrid(_BLINK), t_dpa: str = TDpa(_BLINK), transit: str = Transit(_BLINK),
             pattern: Optional[str] = field_option(PatternSpec, "pattern", _PATTERN, default=None),
             gpus: Optional[str] = field_option(PatternSpec, "gpus", _PATTERN),
             center: Optional[int] = field_option(PatternSpec, "center", _PATTERN),
             successor: Optional[int] = field_option(PatternSpec, "successor", _PATTERN),
             source: Optional[int] = field_option(PatternSpec, "source", _PATTERN),
             network: NetworkSpec = None):
    """Simulate an algorithm's schedule on a topology: time, bandwidths, per-step times, busiest links.
    With --pattern: one of Blink's micro-benchmarks, throughput vs size."""
    if pattern is not None:
        given = [n for n, v in (("COLLECTIVE", collective), ("-A", algorithm), ("--root", root), ("--ranks", ranks),
                                ("--timeline", timeline)) if v is not None]
        if given:
            raise UsageError(f"--pattern {pattern} sets its own schedule: drop {', '.join(given)}")
        run = api.pattern(PatternSpec(pattern=pattern, topology=topology, gpus=gpus, center=center, successor=successor,
                                      source=source, size=size or "1M,16M,256M", mode=mode, segments=segments or 32))
        print_json(run.to_json()) if as_json else render_blink.print_pattern(run)
        return
    if collective is None or algorithm is None:
        raise UsageError("give a COLLECTIVE and -A ALGORITHM (or --pattern NAME)")
    if any(v is not None for v in (gpus, center, successor, source)):
        raise UsageError("--gpus, --center, --successor and --source describe a --pattern: add --pattern NAME")
    output_path(timeline, "--timeline")
    spec = SimulateSpec(collective=collective, algorithm=algorithm, topology=topology, size=size or "1G", mode=mode,
                        segments=segments, root=root, intra_algorithm=intra_algorithm, inter_algorithm=inter_algorithm,
                        network=network, ranks=ranks, hybrid=hybrid, t_dpa=t_dpa, transit=transit,
                        memory_limit=memory_limit, engine=engine)
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
