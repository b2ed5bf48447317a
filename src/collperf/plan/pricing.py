"""Pricing the demands on a cluster: where each group sits and what its collectives cost.

Ranks are numbered node-major (rank = node x ranks_per_node + local). A group inside one node is priced
on the intra link, one rank per node on the inter link (each rank's share of its node's NICs: every rank
of a node is in some group of the same dimension at once), several per node on several nodes as a
two-level collective. Send/recv (PP, CP) is one hop between neighbours.

"best" is the cost model's best among the algorithms NCCL runs for the collective: any for allreduce
(ring, tree, hierarchical), the ring for allgather and reducescatter (NCCL 2.x implements those as
rings, src/device/all_gather.h and reduce_scatter.h up to NCCL 2.22; PAT, 2.23, serves one rank per
node only), whatever the model finds for alltoall. A hierarchical allgather would be faster on paper
and made ZeRO-3 look free at a thousand GPUs; `-A hierarchical` still prices it.

The cost model is numpy-vectorized over sizes, so `Pricer` collects every (collective, network, size)
first and prices each (collective, network) once with all its sizes (`resolve`); the layout search
prices thousands of layouts with a few dozen calls.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from collperf.model.network import Cluster, Network
from collperf.model.predict import best
from collperf.plan.layout import group_shape


def group_network(cluster: Cluster, per_node: int, nodes: int) -> tuple[Network, str]:
    """The network a group of `per_node` ranks on each of `nodes` nodes sees."""
    if nodes == 1:
        return Network.of(cluster.intra, per_node), "intra"
    share = cluster.inter_per_rank
    if per_node == 1:
        return Network.of(share, nodes), "inter"
    sub = Cluster(nodes, per_node, cluster.intra, share, nics_per_node=per_node, name=cluster.name)
    return Network.of(sub), "two-level"


def placed(cluster: Cluster, layout, dim: str, collective: str) -> tuple[Network, str]:
    """The network of one group of `dim`; a send/recv runs between two neighbours of the group."""
    per_node, nodes = group_shape(layout, dim, cluster.ranks_per_node)
    if collective == "sendrecv":
        level = "intra" if nodes == 1 else "inter"
        return Network.of(cluster.intra if nodes == 1 else cluster.inter_per_rank, 2), level
    return group_network(cluster, per_node, nodes)


NCCL_BEST = {"allgather": "ring", "reducescatter": "ring"}


class Pricer:
    """Time of one collective of `size` bytes on a network, each distinct (collective, network) priced
    in one vectorized call."""

    def __init__(self, algorithm: str = "best", intra_algorithm: str = "best", inter_algorithm: str = "best"):
        self.options = (algorithm, intra_algorithm, inter_algorithm)
        self._pending: dict = defaultdict(set)
        self._done: dict = {}

    def request(self, collective: str, network: Network, size: float) -> None:
        key = (collective, network, float(size))
        if network.ranks > 1 and key not in self._done:
            self._pending[(collective, network)].add(float(size))

    def resolve(self) -> None:
        algorithm, intra, inter = self.options
        for (collective, network), sizes in self._pending.items():
            sizes = sorted(sizes)
            alg = (
                "ring"
                if collective == "sendrecv"
                else (algorithm if algorithm != "best" else NCCL_BEST.get(collective, "all"))
            )
            cost, names = best(
                collective, network, np.array(sizes), algorithm=alg, intra_algorithm=intra, inter_algorithm=inter
            )
            for size, t, name in zip(sizes, np.atleast_1d(cost.total_s), np.atleast_1d(names)):
                self._done[(collective, network, size)] = (float(t), "p2p" if collective == "sendrecv" else str(name))
        self._pending.clear()

    def price(self, collective: str, network: Network, size: float) -> tuple[float, str]:
        if network.ranks == 1:
            return 0.0, "-"
        key = (collective, network, float(size))
        if key not in self._done:
            self.request(collective, network, size)
            self.resolve()
        return self._done[key]
