"""A flat algorithm priced on a two-level cluster with the traffic each level actually carries.

A flat (topology-unaware) schedule on N nodes x g ranks does not move every byte over the slowest link:
in a mesh alltoall the 1/N of each rank's data that stays on its node goes over NVLink while the rest
leaves over the NICs, at the same time; in a flat ring only the ranks at node boundaries cross the
network. So each step of the algorithm's own schedule (model/two_level/build.py) is priced per level:

  intra      each rank's port on the intra-node link: max(bytes sent, received) to ranks of its node / intra
  rank NIC   each rank's off-node bytes (max of sent, received) / its share of the NICs, at least one whole
             NIC (a rank's flow goes through a NIC; with more NICs than ranks it stripes over its share)
  node NIC   each node's off-node bytes (max of leaving, entering) / all its NICs together

and a step takes the longest of the three (the levels run concurrently) plus one alpha: the inter-node
latency if any of its transfers crosses nodes, the intra-node one otherwise. The reduction rate is the
slower of the two links' (as on the bottleneck link). On one node, or one rank per node, every transfer
sees one link and this is the closed form on that link; tests hold it to that.

Every term is linear in the size, so a schedule is reduced once (per level, in chunks) and cached.
Pipelined algorithms (tree, chain) keep the segment count k the closed form on the bottleneck link gives
them and are priced from their schedule at a reference count r (k itself up to EXACT_SEGMENTS, else the
power of two below it, at most PRICED_SEGMENTS): r's steps per level, plus the steps k segments add (the
closed form's step count) each at r's costliest step. Past the pipeline's fill every added step is one
with all tree edges busy, which is that costliest step, so this is exact there and at the reference
counts, and an upper bound before the fill (never below what the schedule moves); a handful of schedules
are built however many sizes are asked.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Iterator

import numpy as np
import numpy.typing as npt

from collperf.collectives import formula_bytes, get_collective
from collperf.model.algorithms import Algorithm, get_algorithm
from collperf.model.two_level.build import build, build_array
from collperf.model.costs import Cost, cost
from collperf.model.network import Cluster
from collperf.schedule.arrays import ArraySchedule
from collperf.schedule.ir import Schedule

EXACT_SEGMENTS = 8  # pipelines priced at their own segment count up to here (the fill region)
PRICED_SEGMENTS = 64  # ... then at powers of two up to here (thousands of steps above)


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


def _step_seconds(
    src: np.ndarray, dst: np.ndarray, count: np.ndarray, node: np.ndarray, cluster: Cluster
) -> tuple[float, float]:
    """(alpha, seconds per chunk byte) of one step's transfers (counts in chunks)."""
    ranks, nodes = cluster.ranks, cluster.nodes
    across = node[src] != node[dst]
    within = ~across

    def busiest(ends: np.ndarray, mask: np.ndarray, length: int) -> float:
        most: float = np.bincount(ends[mask], count[mask], length).max(initial=0.0)
        return most

    port = max(busiest(src, within, ranks), busiest(dst, within, ranks)) / cluster.intra.bandwidth_Bps
    rank_nic = max(busiest(src, across, ranks), busiest(dst, across, ranks)) / rank_nic_Bps(cluster)
    node_nic = max(busiest(node[src], across, nodes), busiest(node[dst], across, nodes)) / node_nic_Bps(cluster)
    alpha = cluster.inter.latency_s if across.any() else cluster.intra.latency_s
    return alpha, max(port, rank_nic, node_nic)


@dataclass(frozen=True)
class LevelTerms:
    """A schedule reduced on a cluster's two levels, in chunks (sizes enter only through the chunk's bytes):
    its total alpha, its seconds per chunk byte summed over steps, the chunks of a buffer, and its costliest
    step (alpha, seconds per chunk byte), which bounds what one more pipeline step can add."""

    latency_s: float
    per_chunk_s: float
    chunks: int
    step_latency_s: float
    step_per_chunk_s: float


def _step_traffic(s: ArraySchedule | Schedule) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, int]]:
    """(src, dst, chunk counts, how many steps in a row) per step class; a tuple schedule is read as it is
    (packing its chunks into arrays costs more than the pricing)."""
    if isinstance(s, ArraySchedule):
        for st in s.steps:
            src, dst, count, _ = st.transfers()
            yield src, dst, count.astype(float), st.repeat
        return
    for step in s.steps:
        src, dst, count = (
            np.array(x, dtype=kind)
            for x, kind in zip(
                zip(*((t.src, t.dst, len(t.chunks)) for t in step.transfers)), (np.int64, np.int64, float)
            )
        )
        yield src, dst, count, 1


def level_terms(s: ArraySchedule | Schedule, cluster: Cluster) -> LevelTerms:
    """A schedule on the cluster's two levels (ranks placed node by node: rank r on node r // ranks_per_node).
    The reduction term is the step model's own (schedule_cost), not a level's."""
    node = np.arange(cluster.ranks) // cluster.ranks_per_node
    latency_s = per_chunk_s = step_alpha = step_seconds = 0.0
    for src, dst, count, repeat in _step_traffic(s):
        alpha, seconds = _step_seconds(src, dst, count, node, cluster)
        latency_s += alpha * repeat
        per_chunk_s += seconds * repeat
        step_alpha, step_seconds = max(step_alpha, alpha), max(step_seconds, seconds)
    return LevelTerms(latency_s, per_chunk_s, s.chunks_per_buffer, step_alpha, step_seconds)


def schedule_terms(s: ArraySchedule, cluster: Cluster) -> tuple[float, float]:
    """(latency s, seconds per formula byte) of a schedule on the cluster's two levels."""
    t = level_terms(s, cluster)
    return t.latency_s, t.per_chunk_s / t.chunks


def _steps(alg: Algorithm, ranks: int, segments: int) -> float:
    """Steps of a pipeline of `segments` segments: its closed form's alpha coefficient."""
    assert alg.pipeline is not None  # called for pipelined algorithms only
    return float(np.asarray(alg.pipeline(ranks, np.array([segments]))[0]).ravel()[0])


@lru_cache(maxsize=512)
def _terms(collective: str, algorithm: str, cluster: Cluster, segments: int) -> LevelTerms:
    vectorized = get_algorithm(collective, algorithm).array_builder is not None
    schedule = (build_array if vectorized else build)(collective, algorithm, cluster.ranks, segments=segments)
    return level_terms(schedule, cluster)


def flat_cost(
    collective: str, algorithm: str, cluster: Cluster, size_bytes: npt.ArrayLike, segments: int | None = None
) -> Cost:
    """A flat algorithm's cost over nccl-tests sizes on `cluster`: the closed form on the bottleneck link where
    one link carries everything (one node, one rank per node), else its schedule priced per level."""
    name = get_collective(collective).name
    slow = cluster.bottleneck
    alg = get_algorithm(name, algorithm)
    sizes = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    # the closed form on the bottleneck: NotApplicable where the algorithm cannot run, the pipeline's segment
    # count, and the reduction term (the step model's, at the slower link's rate)
    on_slow = cost(name, algorithm, cluster.ranks, sizes, slow, segments if alg.pipeline else None)
    if not is_split(cluster):
        return on_slow
    n = np.atleast_1d(formula_bytes(name, sizes)).astype(float)
    if alg.pipeline is None:
        ks = np.ones(n.shape, dtype=int)
    else:
        assert on_slow.segments is not None  # a pipelined cost carries its segment counts
        ks = on_slow.segments.astype(int)
    latency, bandwidth = np.zeros(n.shape), np.zeros(n.shape)
    for k in np.unique(ks):
        at = ks == k
        r = reference_segments(int(k)) if alg.pipeline is not None else 1
        t = _terms(name, algorithm, cluster, r)
        # a pipeline of k > r segments: r's steps plus the closed form's extra steps, none costlier than r's
        # costliest step (past the fill every added step is an all-edges one, which is that step): exact in the
        # steady state, an upper bound before it
        extra = _steps(alg, cluster.ranks, int(k)) - _steps(alg, cluster.ranks, r) if alg.pipeline else 0.0
        chunks = t.chunks * int(k) / r
        latency[at] = t.latency_s + extra * t.step_latency_s
        bandwidth[at] = (t.per_chunk_s + extra * t.step_per_chunk_s) * n[at] / chunks
    return Cost(latency, bandwidth, on_slow.compute_s, segments=on_slow.segments)
