"""The prediction API: every algorithm's cost for a collective on a network, with the bound and the best.

A network is either a uniform `Link` with a rank count, or a two-level `Cluster`. On a cluster the
flat algorithms are priced with the traffic each level of their schedule carries (model/two_level/pricing.py:
the part of a step that stays on a node at the intra link, the part that leaves at the NICs, the
slower of the two) and `hierarchical` is the two-level composition of model/two_level/hierarchy.py.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from collperf.collectives import Collective, get_collective
from collperf.errors import UsageError
from collperf.model.bounds import bound_coefficients, lower_bound, node_network_coefficient
from collperf.model.algorithms import algorithms_for, get_algorithm
from collperf.model.algorithms.modes import HIERARCHICAL as MODE_HIERARCHICAL, is_two_level
from collperf.model.costs import Cost, NotApplicable, Phase, cost, lowest
from collperf.model.two_level.hierarchy import PLANS, two_level_cost
from collperf.model.network import Link, Network
from collperf.model.two_level.pricing import flat_cost

HIERARCHICAL = MODE_HIERARCHICAL.name  # the two-level composition of model/two_level/hierarchy.py


@dataclass(frozen=True)
class AlgorithmCost:
    name: str
    cost: Cost  # arrays over the sizes


def candidates(
    collective: str,
    network: Network,
    sizes: npt.ArrayLike,
    algorithm: str | list[str] = "all",
    intra_algorithm: str = "best",
    inter_algorithm: str = "best",
    segments: int | None = None,
) -> tuple[list[AlgorithmCost], dict[str, str]]:
    """Costs of the requested algorithms over `sizes`, and why the others were skipped."""
    name = get_collective(collective).name
    n = np.atleast_1d(np.asarray(sizes, dtype=float))
    wanted = _wanted(name, network, algorithm)
    explicit = algorithm != "all"
    results, skipped = [], {}
    for alg_name in wanted:
        try:
            if is_two_level(alg_name):
                assert network.cluster is not None  # _wanted refuses a two-level name without a cluster
                c = two_level_cost(name, network.cluster, n, intra_algorithm, inter_algorithm)
            elif network.cluster is not None:
                c = flat_cost(name, alg_name, network.cluster, n, segments)
            else:
                pipelined = get_algorithm(name, alg_name).pipeline is not None
                assert network.link is not None  # Network: a uniform link where there is no cluster
                c = cost(name, alg_name, network.ranks, n, network.link, segments if pipelined else None)
            results.append(AlgorithmCost(alg_name, c))
        except NotApplicable as err:
            if explicit:
                raise
            skipped[alg_name] = str(err)
    if not results:
        raise UsageError(f"no algorithm can run {name} on {network.ranks} ranks: " + "; ".join(skipped.values()))
    return results, skipped


def best(collective: str, network: Network, sizes: npt.ArrayLike, **options: Any) -> tuple[Cost, np.ndarray]:
    """The cheapest requested algorithm per size (the one rule every caller uses): its cost and name."""
    results, _ = candidates(collective, network, sizes, **options)
    return lowest([r.cost for r in results], [r.name for r in results])


def _wanted(name: str, network: Network, algorithm: str | list[str] | None) -> list[str]:
    available = [a.name for a in algorithms_for(name)]
    if network.cluster is not None and name in PLANS:
        available.append(HIERARCHICAL)
    if algorithm in (None, "all"):
        return available
    wanted = [a.strip().lower() for a in (algorithm.split(",") if isinstance(algorithm, str) else algorithm)]
    for a in wanted:
        if is_two_level(a) and network.cluster is None:
            raise UsageError(
                "the hierarchical algorithm needs a two-level cluster: give --cluster or --nodes and "
                "--ranks-per-node with intra/inter links"
            )
        if a not in available:
            get_algorithm(name, a)  # raises with the list of known names
    return wanted


def network_lower_bound(collective: str, network: Network, sizes: npt.ArrayLike) -> Cost:
    """The lower bound on a uniform link; on a cluster, the node-level bound on the NICs (every
    node's data must cross its own NICs: bounds.node_network_coefficient, g (N-1)/N of the size for
    alltoall, whose every rank sends its off-node blocks) with the compute bound over all ranks."""
    if network.cluster is None or network.cluster.nodes == 1:
        return lower_bound(collective, network.ranks, sizes, network.flat_link)
    c = network.cluster
    node_nics = Link(c.inter.latency_s, c.inter.bandwidth_Bps * c.nics_per_node, c.inter.reduce_bandwidth_Bps)
    a, _, _ = bound_coefficients(collective, c.nodes)
    b = node_network_coefficient(collective, c.nodes, c.ranks_per_node)
    _, _, compute = bound_coefficients(collective, c.ranks)
    n = np.atleast_1d(np.asarray(sizes, dtype=float))
    gamma = min(c.intra.seconds_per_reduced_byte, c.inter.seconds_per_reduced_byte)
    return Cost(np.full(n.shape, a * c.inter.latency_s), b * n * node_nics.seconds_per_byte, compute * n * gamma)


@dataclass
class AlgorithmPrediction:
    name: str
    time_s: float
    latency_s: float
    bandwidth_s: float
    compute_s: float
    algbw_GBps: float | None  # None where the time is 0 (one rank: nothing moves)
    busbw_GBps: float | None
    bound_ratio: float  # time / lower bound (>= 1)
    segments: int | None = None
    phases: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        doc = {
            k: getattr(self, k)
            for k in (
                "name",
                "time_s",
                "latency_s",
                "bandwidth_s",
                "compute_s",
                "algbw_GBps",
                "busbw_GBps",
                "bound_ratio",
            )
        }
        if self.segments is not None:
            doc["segments"] = self.segments
        if self.phases:
            doc["phases"] = self.phases
        return doc


@dataclass
class Prediction:
    collective: str
    size_bytes: int
    ranks: int
    network: str
    algorithms: list[AlgorithmPrediction]
    best: str
    lower_bound_s: float
    skipped: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    lower_bound_latency_s: float = 0.0  # the bound's latency term: what it adds to bandwidth (and compute) alone

    def to_json(self) -> dict[str, Any]:
        doc = {
            "collective": self.collective,
            "size_bytes": self.size_bytes,
            "ranks": self.ranks,
            "network": self.network,
            "algorithms": [a.to_json() for a in self.algorithms],
            "best": self.best,
            "lower_bound_s": self.lower_bound_s,
            "lower_bound_latency_s": self.lower_bound_latency_s,
        }
        if self.skipped:
            doc["skipped"] = self.skipped
        if self.notes:
            doc["notes"] = self.notes
        return doc


def predict(
    collective: str,
    sizes: npt.ArrayLike,
    network: Network,
    algorithm: str | list[str] = "all",
    intra_algorithm: str = "best",
    inter_algorithm: str = "best",
    segments: int | None = None,
) -> list[Prediction]:
    """One Prediction per size: every requested algorithm's cost, the lower bound, the best."""
    coll = get_collective(collective)
    name = coll.name
    n = np.atleast_1d(np.asarray(sizes, dtype=float))
    results, skipped = candidates(name, network, n, algorithm, intra_algorithm, inter_algorithm, segments)
    bounds = network_lower_bound(name, network, n)
    bound, bound_latency = bounds.total_s, bounds.latency_s
    out = []
    for i, size in enumerate(n):
        rows = [_row(r.name, r.cost, i, size, bound[i], coll, network.ranks) for r in results]
        best = min(rows, key=lambda r: r.time_s).name
        notes = (
            [
                "one rank: the collective moves no data, so every algorithm takes 0 s and bandwidths are "
                "undefined (shown as -)"
            ]
            if network.ranks == 1
            else []
        )
        out.append(
            Prediction(
                name,
                int(size),
                network.ranks,
                network.describe(),
                rows,
                best,
                float(bound[i]),
                skipped,
                notes,
                float(bound_latency[i]),
            )
        )
    return out


def _row(name: str, c: Cost, i: int, size: float, bound_s: float, coll: Collective, ranks: int) -> AlgorithmPrediction:
    time_s = float(c.total_s[i])
    algbw_GBps = busbw_GBps = None  # a zero time (nothing to move) has no bandwidth
    if time_s > 0:
        algbw_GBps, busbw_GBps = coll.bandwidths_GBps(float(size), ranks, time_s)
    return AlgorithmPrediction(
        name,
        time_s,
        float(c.latency_s[i]),
        float(c.bandwidth_s[i]),
        float(c.compute_s[i]),
        algbw_GBps,
        busbw_GBps,
        time_s / float(bound_s) if bound_s > 0 else 1.0,
        int(c.segments[i]) if c.segments is not None else None,
        [_phase_json(ph, i) for ph in c.phases],
    )


def _phase_json(phase: Phase, i: int) -> dict[str, Any]:
    return {
        "phase": phase.name,
        "algorithm": phase.algorithms[i],
        "ranks": phase.ranks,
        "link": phase.link,
        "time_s": float(phase.cost.total_s[i]),
        "latency_s": float(phase.cost.latency_s[i]),
        "bandwidth_s": float(phase.cost.bandwidth_s[i]),
        "compute_s": float(phase.cost.compute_s[i]),
    }
