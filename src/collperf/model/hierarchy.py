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

import numpy as np

from collperf.collectives import get_collective
from collperf.errors import UsageError
from collperf.model.algorithms import algorithms_for
from collperf.model.costs import Cost, NotApplicable, Phase, cost, lowest
from collperf.model.network import Cluster, Link

# collective -> [(level, phase collective, size divisor: "g", "N" or 1)]
PLANS = {
    "allreduce": [("intra", "reducescatter", 1), ("inter", "allreduce", "g"), ("intra", "allgather", 1)],
    "allgather": [("inter", "allgather", "g"), ("intra", "allgather", 1)],
    "reducescatter": [("intra", "reducescatter", 1), ("inter", "reducescatter", "g")],
    "alltoall": [("intra", "alltoall", 1), ("inter", "alltoall", 1)],
    "broadcast": [("inter", "broadcast", 1), ("intra", "broadcast", 1)],
    "reduce": [("intra", "reduce", 1), ("inter", "reduce", 1)],
    "scatter": [("inter", "scatter", 1), ("intra", "scatter", "N")],
    "gather": [("intra", "gather", "N"), ("inter", "gather", 1)],
}
_ALL_RANKS_CROSS = ("allreduce", "allgather", "reducescatter", "alltoall")


def best_cost(collective: str, ranks: int, size_bytes, link: Link) -> tuple[Cost, np.ndarray]:
    """The cheapest applicable algorithm per size: (its cost, its name per size)."""
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    names, costs = [], []
    for alg in algorithms_for(collective):
        if ranks > 1 and alg.unavailable(ranks):
            continue
        names.append(alg.name)
        costs.append(cost(collective, alg.name, ranks, n, link))
    return lowest(costs, names)


def _phase_cost(collective: str, algorithm: str, ranks: int, size, link: Link) -> tuple[Cost, tuple]:
    if algorithm == "best":
        phase_cost, names = best_cost(collective, ranks, size, link)
        return phase_cost, tuple(names)
    try:
        return cost(collective, algorithm, ranks, size, link), (algorithm,) * np.size(size)
    except NotApplicable as err:
        raise NotApplicable(f"hierarchical {collective} phase: {err}") from None


def two_level_cost(collective: str, cluster: Cluster, size_bytes,
                   intra_algorithm: str = "best", inter_algorithm: str = "best") -> Cost:
    """Cost of the hierarchical algorithm; the result's `phases` holds each phase's cost."""
    name = get_collective(collective).name
    if name not in PLANS:
        raise UsageError(f"no two-level algorithm for {name}: expected one of {', '.join(PLANS)}")
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    g, nodes = cluster.ranks_per_node, cluster.nodes
    inter_link = cluster.inter_per_rank if name in _ALL_RANKS_CROSS else cluster.inter
    total = Cost(np.zeros_like(n), np.zeros_like(n), np.zeros_like(n))
    phases = []
    for level, phase_collective, divisor in PLANS[name]:
        ranks = g if level == "intra" else nodes
        if ranks == 1:
            continue   # a level with one rank does nothing
        size = n / {"g": g, "N": nodes, 1: 1}[divisor]
        link = cluster.intra if level == "intra" else inter_link
        algorithm = intra_algorithm if level == "intra" else inter_algorithm
        phase_cost, names = _phase_cost(phase_collective, algorithm, ranks, size, link)
        phases.append(Phase(f"{level} {phase_collective}", names, ranks, link.name or level, phase_cost))
        total = total + phase_cost
    return Cost(total.latency_s, total.bandwidth_s, total.compute_s, phases=tuple(phases))
