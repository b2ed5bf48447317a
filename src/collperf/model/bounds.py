"""Lower bounds per collective: latency, bandwidth and compute (Chan et al. 2007, §3 of the reference).

Bandwidth and compute bounds (full-duplex, no in-network reduction):
  broadcast, sendrecv   n beta                       (the root's / the sender's link carries it all)
  reduce                n beta + (p-1)/p n gamma
  scatter, gather,
  allgather, alltoall   (p-1)/p n beta
  reducescatter         (p-1)/p n beta + (p-1)/p n gamma
  allreduce             2 (p-1)/p n beta + (p-1)/p n gamma   (Patarasuk & Yuan 2009)

Latency: with one message per step (single port), information doubles at best each step, so
ceil(lg p) alpha (Chan). Mesh and one-shot algorithms send to every peer in one step, sharing the
port's bandwidth, which our step model charges one alpha; under that multi-port model the bound is
one alpha. `ports="multi"` (the default, since the catalogue contains such algorithms) bounds every
algorithm; `ports="single"` is Chan's bound, which every single-port algorithm meets.
The terms bound each coefficient separately, so their sum bounds every algorithm of the model.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt

from collperf.collectives import busbw_factor, check_ranks, formula_bytes, get_collective
from collperf.errors import UsageError
from collperf.model.costs import Cost
from collperf.model.network import Link
from collperf.model.trees import ceil_log2

# (bandwidth coefficient, compute coefficient) as functions of p
_TERMS: dict[str, tuple[Callable[[int], float], Callable[[int], float]]] = {
    "broadcast": (lambda p: 1.0, lambda p: 0.0),
    "sendrecv": (lambda p: 1.0, lambda p: 0.0),
    "reduce": (lambda p: 1.0, lambda p: (p - 1) / p),
    "scatter": (lambda p: (p - 1) / p, lambda p: 0.0),
    "gather": (lambda p: (p - 1) / p, lambda p: 0.0),
    "allgather": (lambda p: (p - 1) / p, lambda p: 0.0),
    "alltoall": (lambda p: (p - 1) / p, lambda p: 0.0),
    "reducescatter": (lambda p: (p - 1) / p, lambda p: (p - 1) / p),
    "allreduce": (lambda p: 2 * (p - 1) / p, lambda p: (p - 1) / p),
}


def bound_coefficients(collective: str, ranks: int, ports: str = "multi") -> tuple[float, float, float]:
    """(a, b, c) of the lower bound a alpha + b n beta + c n gamma."""
    name = get_collective(collective).name
    p = check_ranks(ranks)
    if ports not in ("multi", "single"):
        raise UsageError(f"ports {ports!r}: expected 'multi' or 'single'")
    if p == 1:
        return 0.0, 0.0, 0.0
    latency = 1.0 if ports == "multi" or name == "sendrecv" else float(ceil_log2(p))
    bandwidth, compute = _TERMS[name]
    return latency, bandwidth(p), compute(p)


def lower_bound(collective: str, ranks: int, size_bytes: npt.ArrayLike, link: Link, ports: str = "multi") -> Cost:
    a, b, c = bound_coefficients(collective, ranks, ports)
    n = np.atleast_1d(formula_bytes(collective, size_bytes)).astype(float)
    return Cost(
        np.full(n.shape, a * link.latency_s), b * n * link.seconds_per_byte, c * n * link.seconds_per_reduced_byte
    )


# ---- two-level (nodes x GPUs) bounds ------------------------------------------------------------
# A collective on N nodes x g GPUs cannot beat the busiest resource: each node's NICs (the node-level
# bound: treat a node as one endpoint with NICs x rate; Patarasuk & Yuan's argument over N endpoints),
# each GPU's intra-node links (the same argument over the g GPUs of a node) and, for PCIe GPUs without
# P2P, the host bridge every byte crosses. Phases that NCCL pipelines overlap, so the bound is the max
# of the three, not their sum (NCCL 2.30 src/graph/tuning.cc: NVLSTree/Tree pipeline intra and inter).
#
# In-network reduction (InfiniBand SHARP: Graham et al., "Scalable Hierarchical Aggregation Protocol
# (SHARP)", COMHPC 2016; NCCL's CollNet algorithms, NCCL 2.30.7 src/graph/tuning.cc and src/enqueue.cc)
# lets the switches add what the nodes send. Allreduce then needs, per node and direction, the node's whole
# vector once (every element's result depends on this node's contribution, so something carrying it must
# leave the node) and the result once (every element's result depends on the other nodes): n up, n down,
# against the ring's 2 (N-1)/N n (Patarasuk & Yuan), so the term halves as N grows (equal at N = 2, 2/3 of
# the ring's at N = 4). Allgather is bound by what a node receives and reducescatter by what it sends,
# (N-1)/N n either way, so switch reduction or multicast cannot lower theirs: only allreduce changes.

# bytes per size that each node sends over its NICs, as a function of N (nodes) and g
_NODE_NET: dict[str, Callable[[int, int], float]] = {
    "allreduce": lambda N, g: 2.0 * (N - 1) / N,
    "allgather": lambda N, g: (N - 1) / N,
    "reducescatter": lambda N, g: (N - 1) / N,
    "broadcast": lambda N, g: 1.0,
    "reduce": lambda N, g: 1.0,
    "alltoall": lambda N, g: g * (N - 1) / N,  # every rank's off-node blocks
    "scatter": lambda N, g: (N - 1) / N,
    "gather": lambda N, g: (N - 1) / N,
    "sendrecv": lambda N, g: 1.0,
}


def node_network_coefficient(
    collective: str, nodes: int, gpus_per_node: int, in_network_reduction: bool = False
) -> float:
    """Bytes per byte of size that each node must send over its NICs (0 on one node); with in-network
    reduction (SHARP), allreduce's is 1: the node's vector up once, the result down once."""
    name = get_collective(collective).name
    if nodes <= 1:
        return 0.0
    coefficient = _NODE_NET[name](int(nodes), int(gpus_per_node))
    return min(coefficient, 1.0) if in_network_reduction and name == "allreduce" else coefficient


def _intra_coefficient(name: str, g: int, in_switch_reduction: bool) -> float:
    """Bytes per size each GPU moves over its intra-node links in the intra phase (the flat bound
    over the g GPUs of a node); NVLS reduces in the switch, halving allreduce's (Patarasuk-Yuan: each
    GPU sends its (g-1)/g share once and receives the reduced share once)."""
    if g <= 1:
        return 0.0
    if name == "allreduce":
        return (g - 1) / g if in_switch_reduction else 2.0 * (g - 1) / g
    if name in ("broadcast", "reduce", "sendrecv"):
        return 1.0
    return (g - 1) / g


def _host_bridge_coefficient(name: str, p: int) -> float:
    """Bytes per size crossing a shared host bridge (PCIe without P2P: every GPU-to-GPU byte goes
    through host memory): the sum over ranks of what each must receive (Patarasuk-Yuan per rank)."""
    if p <= 1:
        return 0.0
    return {"allreduce": 2.0 * (p - 1), "broadcast": float(p - 1), "reduce": 1.0, "sendrecv": 1.0}.get(
        name, float(p - 1)
    )


@dataclass(frozen=True)
class TwoLevelBound:
    """Lower bound per size and which resource binds."""

    collective: str
    ranks: int
    size_bytes: npt.NDArray[np.float64]
    network_s: npt.NDArray[np.float64]
    intra_s: npt.NDArray[np.float64]
    host_bridge_s: npt.NDArray[np.float64]

    @property
    def time_s(self) -> np.ndarray:
        return np.maximum(np.maximum(self.network_s, self.intra_s), self.host_bridge_s)

    @property
    def binding(self) -> list[str]:
        stacked = np.vstack([self.network_s, self.intra_s, self.host_bridge_s])
        names = np.array(["network", "intra-node", "host bridge"])
        return list(names[np.argmax(stacked, axis=0)])

    @property
    def peak_busbw_Bps(self) -> float:
        """The busbw no size can exceed (bandwidth terms are linear in size)."""
        per_byte = max(
            float(np.max(t / np.maximum(self.size_bytes, 1)))
            for t in (self.network_s, self.intra_s, self.host_bridge_s)
        )
        return math.inf if per_byte == 0 else busbw_factor(self.collective, self.ranks) / per_byte


def two_level_bound(
    collective: str,
    size_bytes: npt.ArrayLike,
    nodes: int,
    gpus_per_node: int,
    intra_Bps: float,
    node_network_Bps: float,
    in_switch_reduction: bool = False,
    host_bridge_Bps: float | None = None,
    in_network_reduction: bool = False,
) -> TwoLevelBound:
    """max(node-level network bound, intra-node bound, host-bridge bound) per size.

    node_network_Bps: one node's NICs together (NICs x rate). intra_Bps: one GPU's links to the other
    GPUs of its node, per direction. host_bridge_Bps: the shared path through host memory (None: P2P).
    in_switch_reduction: NVLS inside the node; in_network_reduction: SHARP (CollNet) between nodes.
    """
    name = get_collective(collective).name
    check_ranks(nodes), check_ranks(gpus_per_node)
    if not (intra_Bps > 0 and node_network_Bps > 0):
        raise UsageError(f"intra {intra_Bps!r} B/s and network {node_network_Bps!r} B/s must be > 0")
    n = np.atleast_1d(formula_bytes(name, size_bytes)).astype(float)
    N, g = int(nodes), int(gpus_per_node)
    net = n * node_network_coefficient(name, N, g, in_network_reduction) / node_network_Bps
    intra = n * _intra_coefficient(name, g, in_switch_reduction and name == "allreduce") / intra_Bps
    bridge = np.zeros_like(n)
    if host_bridge_Bps:
        bridge = n * _host_bridge_coefficient(name, g) / host_bridge_Bps
    return TwoLevelBound(name, N * g, n, net, intra, bridge)
