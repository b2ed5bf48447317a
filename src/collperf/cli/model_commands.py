"""Commands over the model and the schedules: predict, crossover, algorithms, schedule, verify, simulate."""

from __future__ import annotations

from typing import Optional

import typer

from collperf import api
from collperf.cli import render
from collperf.cli.options import (command, Collective, InterAlg, IntraAlg, Json, network_options,
                                  one_or_many)
from collperf.cli.render import out, print_json
from collperf.spec import output_path, NetworkSpec, SimulateSpec


@command()
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
    print_json(one_or_many([r.to_json() for r in results])) if as_json else render.print_predictions(results)


@command()
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


@command()
def algorithms(collective: Optional[str] = typer.Argument(None, help="Only this collective."), as_json: bool = Json):
    """List every collective and algorithm with its cost formula and source."""
    rows = api.algorithms(collective)
    print_json([render.algorithm_json(a) for a in rows]) if as_json else render.print_algorithms(rows)


@command()
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


@command("verify")
def verify_command(collective: Optional[str] = typer.Option(None, "--collective", help="Only this collective."),
                   algorithm: Optional[str] = typer.Option(None, "--algorithm", "-A"),
                   max_ranks: int = typer.Option(64, "--max-ranks"), min_ranks: int = typer.Option(1, "--min-ranks"),
                   as_json: bool = Json):
    """Symbolically verify every schedule for every rank count up to --max-ranks."""
    rows = api.verify_all(collective, algorithm, max_ranks, min_ranks)
    print_json([vars(r) for r in rows]) if as_json else render.print_verification(rows, min_ranks, max_ranks)
    if any(r.failures for r in rows):
        raise typer.Exit(1)


@command()
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
    output_path(timeline, "--timeline")
    sims = api.simulate(SimulateSpec(collective, algorithm, topology, size, mode, segments, root, intra_algorithm,
                                     inter_algorithm, network))
    if timeline:
        render.plot_timeline(sims[-1], timeline)
    if as_json:
        print_json(one_or_many([render.simulation_json(s) for s in sims]))
        return
    for sim in sims:
        render.print_simulation(sim)
    if timeline:
        out.print(f"timeline of the {sims[-1].result.size_bytes:.0f}-byte run written to {timeline}")
