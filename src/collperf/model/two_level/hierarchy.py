"""Two-level (hierarchical) composition on a cluster of nodes x ranks_per_node.

Neuron's hierarchical algorithm (AWS Neuron, "Inter-node Collective Communications with AWS Neuron") and
the two-level model of the cost-model chapter "The Collective Cost Model":
  allreduce      intra reducescatter (n) -> inter allreduce (n/g) -> intra allgather (n)
  allgather      inter allgather (n/g) -> intra allgather (n)
  reducescatter  intra reducescatter (n) -> inter reducescatter (n/g)
  alltoall       intra alltoall (n) -> inter alltoall (n)       (each rank still sends n per phase)
  broadcast      inter broadcast (n) -> intra broadcast (n)
  reduce         intra reduce (n) -> inter reduce (n)
  scatter        inter scatter (n) -> intra scatter (n/N)
  gather         intra gather (n/N) -> inter gather (n)
with g ranks per node and N nodes; n is the nccl-tests size. In the first four, all g ranks of a
node cross the network at once (g concurrent inter-node groups), each with NIC bandwidth x NICs
per node / g; in the rooted ones only one rank per node does, with one NIC's bandwidth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, NamedTuple

import numpy as np
import numpy.typing as npt

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import algorithms_for
from collperf.model.costs import Cost, NotApplicable, Phase, cost, lowest
from collperf.model.network import Cluster, Link


class PlanPhase(NamedTuple):
    """One phase of a two-level plan: on which level, which sub-collective, and what it moves."""

    level: str  # "intra" (every node at once) or "inter" (the groups that span the nodes)
    collective: str  # the sub-collective the phase runs, with its own algorithm
    divisor: str | int  # the phase's size is n / divisor: "g" ranks per node, "N" nodes, or 1


@dataclass(frozen=True)
class TwoLevelPlan:
    """A collective's two-level composition, read by the cost (two_level_cost), the schedule builder
    (model/two_level/hierarchical.py) and the runner (model/two_level/build.py build_two_level)."""

    collective: str
    phases: tuple[PlanPhase, ...]
    # the phase algorithm `-A hierarchical` runs (bench, auto, the user collectives) when none is given
    default_algorithm: str
    # True: all g ranks of a node cross the network at once (g inter groups, one per local index, each with
    # NIC bandwidth x NICs per node / g); False (rooted): only the local-rank-0 group does, with one NIC
    all_ranks_cross: bool
    # how the builder maps each phase's chunks onto the whole buffer's (hierarchical.COMPOSERS):
    # "blocks" (block n*g + b), "split-blocks" (intra block b split into the inter phase's chunks),
    # "whole-buffer" (both phases on all of it), "pairs" (chunk source * p + destination)
    layout: str

    def __iter__(self) -> Iterator[PlanPhase]:
        return iter(self.phases)


def _plan(
    collective: str, default_algorithm: str, all_ranks_cross: bool, layout: str, *phases: tuple[str, str, str | int]
) -> tuple[str, TwoLevelPlan]:
    return collective, TwoLevelPlan(
        collective, tuple(PlanPhase(*ph) for ph in phases), default_algorithm, all_ranks_cross, layout
    )


# one row per collective, in the order of the module docstring
PLANS: dict[str, TwoLevelPlan] = dict(
    [
        _plan(
            "allreduce",
            "ring",
            True,
            "split-blocks",
            ("intra", "reducescatter", 1),
            ("inter", "allreduce", "g"),
            ("intra", "allgather", 1),
        ),
        _plan("allgather", "ring", True, "blocks", ("inter", "allgather", "g"), ("intra", "allgather", 1)),
        _plan("reducescatter", "ring", True, "blocks", ("intra", "reducescatter", 1), ("inter", "reducescatter", "g")),
        _plan("alltoall", "pairwise", True, "pairs", ("intra", "alltoall", 1), ("inter", "alltoall", 1)),
        _plan("broadcast", "binomial", False, "whole-buffer", ("inter", "broadcast", 1), ("intra", "broadcast", 1)),
        _plan("reduce", "binomial", False, "whole-buffer", ("intra", "reduce", 1), ("inter", "reduce", 1)),
        _plan("scatter", "binomial", False, "blocks", ("inter", "scatter", 1), ("intra", "scatter", "N")),
        _plan("gather", "binomial", False, "blocks", ("intra", "gather", "N"), ("inter", "gather", 1)),
    ]
)


def get_plan(collective: str) -> TwoLevelPlan:
    """The two-level plan of `collective`; a collective without one is a UsageError naming those that have."""
    name = get_collective(collective).name
    if name not in PLANS:
        raise UsageError(f"no two-level algorithm for {name}: expected one of {', '.join(PLANS)}")
    return PLANS[name]


def phase_ranks(level: str, nodes: int, ranks_per_node: int) -> int:
    """The ranks of one group of a phase: the ranks of a node (intra) or one rank per node (inter)."""
    return ranks_per_node if level == "intra" else nodes


def best_cost(collective: str, ranks: int, size_bytes: npt.ArrayLike, link: Link) -> tuple[Cost, np.ndarray]:
    """The cheapest applicable algorithm per size: (its cost, its name per size)."""
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    names, costs = [], []
    for alg in algorithms_for(collective):
        if ranks > 1 and alg.unavailable(ranks):
            continue
        names.append(alg.name)
        costs.append(cost(collective, alg.name, ranks, n, link))
    return lowest(costs, names)


def _phase_cost(
    collective: str, algorithm: str, ranks: int, size: npt.NDArray[np.float64], link: Link
) -> tuple[Cost, tuple[str, ...]]:
    if algorithm == "best":
        phase_cost, names = best_cost(collective, ranks, size, link)
        return phase_cost, tuple(names)
    try:
        return cost(collective, algorithm, ranks, size, link), (algorithm,) * np.size(size)
    except NotApplicable as err:
        raise NotApplicable(f"hierarchical {collective} phase: {err}") from None


def two_level_cost(
    collective: str,
    cluster: Cluster,
    size_bytes: npt.ArrayLike,
    intra_algorithm: str = "best",
    inter_algorithm: str = "best",
) -> Cost:
    """Cost of the hierarchical algorithm; the result's `phases` holds each phase's cost."""
    plan = get_plan(collective)
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    g, nodes = cluster.ranks_per_node, cluster.nodes
    inter_link = cluster.inter_per_rank if plan.all_ranks_cross else cluster.inter
    total = Cost(np.zeros_like(n), np.zeros_like(n), np.zeros_like(n))
    phases = []
    for level, phase_collective, divisor in plan.phases:
        ranks = phase_ranks(level, nodes, g)
        if ranks == 1:
            continue  # a level with one rank does nothing
        size = n / {"g": g, "N": nodes, 1: 1}[divisor]
        link = cluster.intra if level == "intra" else inter_link
        algorithm = intra_algorithm if level == "intra" else inter_algorithm
        phase_cost, names = _phase_cost(phase_collective, algorithm, ranks, size, link)
        phases.append(Phase(f"{level} {phase_collective}", names, ranks, link.name or level, phase_cost))
        total = total + phase_cost
    return Cost(total.latency_s, total.bandwidth_s, total.compute_s, phases=tuple(phases))
