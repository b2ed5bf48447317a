"""A flat algorithm priced on a two-level cluster with the traffic each level actually carries.

A flat (topology-unaware) schedule on N nodes x g ranks does not move every byte over the slowest link:
in a mesh alltoall the 1/N of each rank's data that stays on its node goes over NVLink while the rest
leaves over the NICs, at the same time; in a flat ring only the ranks at node boundaries cross the
network. So each step of the algorithm's own schedule (model/algorithms/build.py) is priced per level:

  intra      each rank's port on the intra-node link: max(bytes sent, received) to ranks of its node / intra
  rank NIC   each rank's off-node bytes (max of sent, received) / its share of the NICs, at least one whole
             NIC (a rank's flow goes through a NIC; with more NICs than ranks it stripes over its share)
  node NIC   each node's off-node bytes (max of leaving, entering) / all its NICs together

and a step takes the longest of the three (the levels run concurrently) plus one alpha: the inter-node
latency if any of its transfers crosses nodes, the intra-node one otherwise. The reduction rate is the
slower of the two links' (as on the bottleneck link). On one node, or one rank per node, every transfer
sees one link and this is the closed form on that link; tests hold it to that.

Every term is linear in the size, so a schedule is reduced once to (latency s, seconds per byte,
seconds per reduced byte) and cached. Pipelined algorithms (tree, chain) get their segment count from
the closed form on the bottleneck link as before; their schedule at a reference count (the count itself up
to EXACT_SEGMENTS, else the power of two below it, at most PRICED_SEGMENTS) gives the effective link (its
mean step alpha and its bandwidth) on which the closed form at the chosen count is evaluated: exact at the
reference counts, and a handful of schedules built however many sizes are asked (a tree pipeline's steps
repeat past its fill, so the per-step ratio of the two levels changes little between reference counts).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from collperf.collectives import get_collective
from collperf.model.algorithms import get_algorithm
from collperf.model.algorithms.build import build_array
from collperf.model.costs import Cost, cost
from collperf.model.network import Cluster, Link
from collperf.model.schedule_cost import coefficients as uniform_coefficients
from collperf.schedule.arrays import ArraySchedule

EXACT_SEGMENTS = 8      # pipelines priced at their own segment count up to here (the fill region)
PRICED_SEGMENTS = 64    # ... then at powers of two up to here (thousands of steps above)


def reference_segments(k: int) -> int:
    """The segment count whose schedule prices a pipeline of k segments on two levels."""
    if k <= EXACT_SEGMENTS:
        return int(k)
    return 1 << (min(int(k), PRICED_SEGMENTS).bit_length() - 1)


def is_split(cluster: Cluster | None) -> bool:
    """Whether flat algorithms see two levels (several nodes of several ranks) rather than one link."""
    return cluster is not None and cluster.nodes > 1 and cluster.ranks_per_node > 1


def rank_nic_Bps(cluster: Cluster) -> float:
    """The off-node bandwidth one rank can use alone: its share of the node's NICs, at least one NIC."""
    return cluster.inter.bandwidth_Bps * max(1.0, cluster.nics_per_node / cluster.ranks_per_node)


def node_nic_Bps(cluster: Cluster) -> float:
    return cluster.inter.bandwidth_Bps * cluster.nics_per_node


def _step_seconds(src, dst, count, node, cluster: Cluster) -> tuple[float, float]:
    """(alpha, seconds per chunk byte) of one step's transfers (counts in chunks)."""
    ranks, nodes = cluster.ranks, cluster.nodes
    across = node[src] != node[dst]
    within = ~across

    def busiest(ends, mask, length):
        return np.bincount(ends[mask], count[mask], length).max(initial=0.0)

    port = max(busiest(src, within, ranks), busiest(dst, within, ranks)) / cluster.intra.bandwidth_Bps
    rank_nic = max(busiest(src, across, ranks), busiest(dst, across, ranks)) / rank_nic_Bps(cluster)
    node_nic = max(busiest(node[src], across, nodes), busiest(node[dst], across, nodes)) / node_nic_Bps(cluster)
    alpha = cluster.inter.latency_s if across.any() else cluster.intra.latency_s
    return alpha, max(port, rank_nic, node_nic)


def schedule_terms(s: ArraySchedule, cluster: Cluster) -> tuple[float, float]:
    """(latency s, seconds per formula byte) of a schedule on the cluster's two levels (ranks placed node by
    node: rank r on node r // ranks_per_node). The reduction term is the step model's own (schedule_cost)."""
    node = np.arange(cluster.ranks) // cluster.ranks_per_node
    latency_s, per_chunk_s = 0.0, 0.0
    for st in s.steps:
        src, dst, count, _ = st.transfers()
        alpha, seconds = _step_seconds(src, dst, count.astype(float), node, cluster)
        latency_s += alpha * st.repeat
        per_chunk_s += seconds * st.repeat
    return latency_s, per_chunk_s / s.chunks_per_buffer


@lru_cache(maxsize=512)
def _effective_link(collective: str, algorithm: str, cluster: Cluster, segments: int) -> Link:
    """The uniform link on which the closed form equals the schedule's two-level price: alpha the mean step
    latency, the bandwidth the uniform byte coefficient over the two-level seconds per byte, the reduction
    rate the bottleneck's."""
    s = build_array(collective, algorithm, cluster.ranks, segments=segments)
    a, b, _ = uniform_coefficients(s)
    latency_s, seconds_per_byte = schedule_terms(s, cluster)
    slow = cluster.bottleneck
    return Link(latency_s / a if a else slow.latency_s,
                b / seconds_per_byte if seconds_per_byte > 0 else slow.bandwidth_Bps,
                slow.reduce_bandwidth_Bps, "two-level")


def flat_cost(collective: str, algorithm: str, cluster: Cluster, size_bytes, segments: int | None = None) -> Cost:
    """A flat algorithm's cost over nccl-tests sizes on `cluster`: the closed form on the bottleneck link where
    one link carries everything (one node, one rank per node), else its schedule priced per level."""
    name = get_collective(collective).name
    slow = cluster.bottleneck
    alg = get_algorithm(name, algorithm)
    sizes = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    if not is_split(cluster):
        return cost(name, algorithm, cluster.ranks, sizes, slow, segments if alg.pipeline else None)
    on_slow = cost(name, algorithm, cluster.ranks, sizes, slow, segments if alg.pipeline else None)  # NotApplicable
    if alg.pipeline is None:
        return cost(name, algorithm, cluster.ranks, sizes, _effective_link(name, algorithm, cluster, 1))
    ks = on_slow.segments.astype(int)
    latency, bandwidth, compute = (np.zeros(sizes.shape) for _ in range(3))
    for k in np.unique(ks):
        at = ks == k
        link = _effective_link(name, algorithm, cluster, reference_segments(int(k)))
        c = cost(name, algorithm, cluster.ranks, sizes[at], link, int(k))
        latency[at], bandwidth[at], compute[at] = c.latency_s, c.bandwidth_s, c.compute_s
    return Cost(latency, bandwidth, compute, segments=ks.astype(float))


