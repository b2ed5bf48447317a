"""Closed-form alpha-beta-gamma costs of every (collective, algorithm): a registry.

T(p, n) = a*alpha + b*n*beta + c*n*gamma  (reference/cost-formulas.md §2), with n the formula bytes
of collectives.formula_bytes, beta = 1/bandwidth, gamma = 1/reduce bandwidth.

Model of a step (the same one the schedules are costed with): all transfers of a step run at once;
a step costs one alpha, plus the busiest rank's max(bytes sent, bytes received) times beta (one
full-duplex port shared by that rank's messages), plus the most bytes any rank reduces times
gamma. Under this model the single-port algorithms reproduce the MPICH/Chan formulas exactly, and
mesh / one-shot algorithms (several peers in one step) cost what Neuron and ASTRA-sim's "direct"
describe. Non-power-of-two p uses MPICH's fold-in; where our schedule moves a different amount than
MPICH's header comment says, the coefficient follows the schedule and says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from collperf.collectives import check_ranks, formula_bytes, get_collective
from collperf.errors import UsageError
from collperf.model import trees as T
from collperf.model.network import Link

Coefficients = tuple[float, float, float]


@dataclass(frozen=True)
class Phase:
    """One phase of a composed (two-level) algorithm."""

    name: str          # e.g. "intra reducescatter"
    algorithms: tuple[str, ...]   # the algorithm used, per size
    ranks: int
    link: str
    cost: "Cost"


@dataclass(frozen=True)
class Cost:
    """Seconds, split into latency, bandwidth and compute terms; arrays over sizes."""

    latency_s: np.ndarray
    bandwidth_s: np.ndarray
    compute_s: np.ndarray
    segments: np.ndarray | None = None   # pipeline segments per size, for pipelined algorithms
    phases: tuple[Phase, ...] = field(default=())

    @property
    def total_s(self) -> np.ndarray:
        return self.latency_s + self.bandwidth_s + self.compute_s

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(self.latency_s + other.latency_s, self.bandwidth_s + other.bandwidth_s,
                    self.compute_s + other.compute_s, phases=self.phases + other.phases)


@dataclass(frozen=True)
class Algorithm:
    collective: str
    name: str
    formula: str                 # the cost in words, for `collperf algorithms`
    source: str
    coefficients: Callable[[int], Coefficients] | None = None
    # pipelined algorithms: (p, k array) -> (a, b, c) arrays for k segments per tree/chain
    pipeline: Callable[[int, np.ndarray], tuple] | None = None
    requires: Callable[[int], str | None] = lambda p: None
    multiport: bool = False      # talks to several peers in one step (mesh, one-shot)

    def unavailable(self, ranks: int) -> str | None:
        """Why this algorithm cannot run on `ranks` ranks, or None."""
        return self.requires(ranks) if ranks > 1 else None


class NotApplicable(UsageError):
    """An algorithm that cannot run at this rank count."""


# ---------------------------------------------------------------------------------------------
# Coefficient helpers. lg = ceil(log2 p) for trees; q = (p-1)/p.

def _lg(p: int) -> int:
    return T.ceil_log2(p)


def _q(p: int) -> float:
    return (p - 1) / p


def _needs_pow2(p: int) -> str | None:
    if T.is_pow2(p):
        return None
    return f"needs a power-of-two rank count (got {p}; nearest {T.floor_pow2(p)} or {2 * T.floor_pow2(p)})"


def _fold(p: int) -> int:
    return 1 if not T.is_pow2(p) else 0


def _recursive_halving_rs(p: int) -> Coefficients:
    # Fold (alpha + n beta + n gamma), halving steps of the largest sent range, unfold of one block
    # (alpha + n/p beta). MPICH's header writes n(1+(p-1+n)/p)beta for the non-pow2 case and omits
    # the final block's transfer; the schedule moves it, so it is counted here.
    pow2 = T.floor_pow2(p)
    sent_chunks = sum(T.recursive_halving_chunk_steps(p))
    f = _fold(p)
    a = math.log2(pow2) + 2 * f
    b = f * (1 + 1 / p) + sent_chunks / p
    c = f * 1 + sent_chunks / p
    return a, b, c


def _rhd_allreduce(p: int) -> Coefficients:
    # Rabenseifner on p' = 2^floor(lg p) ranks and p' chunks, with fold-in and fold-out
    # (MPICH allreduce_intra_reduce_scatter_allgather.c; its (p-1)/p is (p'-1)/p' for non-pow2).
    pow2 = T.floor_pow2(p)
    f = _fold(p)
    return 2 * math.log2(pow2) + 2 * f, 2 * _q(pow2) + 2 * f, _q(pow2) + f


def _rhd_reduce(p: int) -> Coefficients:
    # MPICH reduce_intra_reduce_scatter_gather.c: odd ranks fold into their left neighbour.
    pow2 = T.floor_pow2(p)
    f = _fold(p)
    return 2 * math.log2(pow2) + f, 2 * _q(pow2) + f, _q(pow2) + f


def _recursive_doubling_allreduce(p: int) -> Coefficients:
    lg = math.log2(T.floor_pow2(p))
    f = _fold(p)
    return lg + 2 * f, lg + 2 * f, lg + f


def _chain(p: int, k):
    # T = (p - 2 + k)(alpha + n beta / k): segment j leaves rank i at step i + j.
    k = np.asarray(k, dtype=float)
    steps = p - 2 + k
    return steps, steps / k, np.zeros_like(k)


def _tree_pipeline(forest: Callable[[int], tuple], directions: int, reduces: bool):
    """Pipelined forest (k segments per tree). directions=1: one pass (broadcast or reduce);
    2: reduce up then broadcast down (allreduce)."""

    def coefficients(p: int, k):
        trees = forest(p)
        steps, port, reduced = T.tree_profile(trees, k)
        segment = 1.0 / (len(trees) * np.asarray(k, dtype=float))   # of n
        return directions * steps, directions * port * segment, (reduced * segment if reduces else 0 * steps)

    return coefficients


def _dtree(p: int):
    return T.nccl_dtree_parents(p)


def _rooted_dtree(p: int):
    return T.rooted_dtree_parents(p, 0)


def _binomial(a_per_step: float = 1, b_per_step: float = 1, c_per_step: float = 0):
    return lambda p: (_lg(p) * a_per_step, _lg(p) * b_per_step, _lg(p) * c_per_step)


def _const(a, b, c):
    """Coefficients given as functions of p, or numbers."""
    def coefficients(p):
        return tuple(float(x(p)) if callable(x) else float(x) for x in (a, b, c))
    return coefficients


# ---------------------------------------------------------------------------------------------

_MPICH = "Thakur, Rabenseifner & Gropp 2005 / MPICH src/mpi/coll/"
_CHAN = "Chan, Heimlich, Purkayastha & van de Geijn 2007"

ALGORITHMS: list[Algorithm] = [
    # Broadcast
    Algorithm("broadcast", "binomial", "ceil(lg p) alpha + ceil(lg p) n beta", _MPICH + "bcast_intra_binomial.c",
              _binomial()),
    Algorithm("broadcast", "scatter-allgather",
              "2 ceil(lg p) alpha + 2 (p-1)/p n beta  (binomial scatter + Bruck allgather; van de Geijn)",
              _MPICH + "bcast_intra_scatter_recursive_doubling_allgather.c",
              _const(lambda p: 2 * _lg(p), lambda p: 2 * _q(p), 0)),
    Algorithm("broadcast", "chain", "(p-2+k)(alpha + n beta / k), k* = sqrt((p-2) n beta / alpha)",
              "pipelined chain; Bar-Noy & Kipnis 1994 for the round bound", pipeline=_chain),
    Algorithm("broadcast", "double-binary-tree",
              "(k+H-1) alpha + (steps' busiest-port segments) n beta / 2k; -> n beta for large n",
              "Sanders, Speck & Traeff 2009 two-tree; NCCL trees.cc double binary tree",
              pipeline=_tree_pipeline(_rooted_dtree, 1, False)),
    # Reduce
    Algorithm("reduce", "binomial", "ceil(lg p) (alpha + n beta + n gamma)", _MPICH + "reduce_intra_binomial.c",
              _binomial(1, 1, 1)),
    Algorithm("reduce", "rhd",
              "2 lg p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma (+ alpha + n beta + n gamma fold-in if p != p')",
              _MPICH + "reduce_intra_reduce_scatter_gather.c (Rabenseifner)", _rhd_reduce),
    Algorithm("reduce", "double-binary-tree", "time reversal of the double-binary-tree broadcast, plus reduction",
              "Sanders, Speck & Traeff 2009 two-tree reduction",
              pipeline=_tree_pipeline(_rooted_dtree, 1, True)),
    # Scatter / Gather
    Algorithm("scatter", "binomial", "ceil(lg p) alpha + (p-1)/p n beta", _MPICH + "scatter_intra_binomial.c",
              _const(_lg, _q, 0)),
    Algorithm("scatter", "linear", "(p-1) alpha + (p-1)/p n beta", _MPICH + "scatterv_allcomm_linear.c",
              _const(lambda p: p - 1, _q, 0)),
    Algorithm("gather", "binomial", "ceil(lg p) alpha + (p-1)/p n beta", _MPICH + "gather_intra_binomial.c",
              _const(_lg, _q, 0)),
    Algorithm("gather", "linear", "(p-1) alpha + (p-1)/p n beta", _MPICH + "gatherv_allcomm_linear.c",
              _const(lambda p: p - 1, _q, 0)),
    # AllGather
    Algorithm("allgather", "ring", "(p-1) alpha + (p-1)/p n beta", _MPICH + "allgather_intra_ring.c; " + _CHAN,
              _const(lambda p: p - 1, _q, 0)),
    Algorithm("allgather", "recursive-doubling", "lg p alpha + (p-1)/p n beta (power-of-two p)",
              _MPICH + "allgather_intra_recursive_doubling.c", _const(_lg, _q, 0), requires=_needs_pow2),
    Algorithm("allgather", "bruck", "ceil(lg p) alpha + (p-1)/p n beta (any p)",
              "Bruck et al. 1997; " + _MPICH + "allgather_intra_brucks.c", _const(_lg, _q, 0)),
    Algorithm("allgather", "mesh", "alpha + (p-1)/p n beta (all peers in one step, port shared)",
              "AWS Neuron inter-node Mesh; ASTRA-sim direct", _const(1, _q, 0), multiport=True),
    # ReduceScatter
    Algorithm("reducescatter", "ring", "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma", _CHAN + " (bucket); NCCL ring",
              _const(lambda p: p - 1, _q, _q)),
    Algorithm("reducescatter", "recursive-halving",
              "lg p alpha + (p-1)/p n (beta + gamma) for pow2; fold-in otherwise",
              _MPICH + "reduce_scatter_intra_recursive_halving.c", _recursive_halving_rs),
    Algorithm("reducescatter", "pairwise", "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma",
              _MPICH + "reduce_scatter_block_intra_pairwise.c", _const(lambda p: p - 1, _q, _q)),
    Algorithm("reducescatter", "mesh", "alpha + (p-1)/p n beta + (p-1)/p n gamma",
              "AWS Neuron inter-node Mesh; ASTRA-sim direct", _const(1, _q, _q), multiport=True),
    # AllReduce
    Algorithm("allreduce", "ring", "2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma",
              _CHAN + "; Patarasuk & Yuan 2009; NCCL ring", _const(lambda p: 2 * (p - 1), lambda p: 2 * _q(p), _q)),
    Algorithm("allreduce", "recursive-doubling", "lg p (alpha + n beta + n gamma) (+ fold-in if p != p')",
              _MPICH + "allreduce_intra_recursive_doubling.c", _recursive_doubling_allreduce),
    Algorithm("allreduce", "rhd",
              "2 lg p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma (+ 2 alpha + 2 n beta + n gamma if p != p')",
              _MPICH + "allreduce_intra_reduce_scatter_allgather.c (Rabenseifner)", _rhd_allreduce),
    Algorithm("allreduce", "reduce-broadcast", "2 ceil(lg p) alpha + 2 ceil(lg p) n beta + ceil(lg p) n gamma",
              "binomial reduce + binomial broadcast (MPICH rows composed)", _binomial(2, 2, 1)),
    Algorithm("allreduce", "double-binary-tree",
              "reduce up and broadcast down NCCL's two complementary trees, n/2 each, k segments; -> 2 n beta",
              "NCCL trees.cc ncclGetDtree; Sanders et al. 2009",
              pipeline=_tree_pipeline(_dtree, 2, True)),
    Algorithm("allreduce", "mesh", "2 alpha + 2 (p-1)/p n beta + (p-1)/p n gamma (two-shot: mesh RS + mesh AG)",
              "AWS Neuron Mesh; ASTRA-sim direct (astra-sim #296)", _const(2, lambda p: 2 * _q(p), _q), multiport=True),
    Algorithm("allreduce", "one-shot", "alpha + (p-1) n beta + (p-1) n gamma (everyone sends everything)",
              "AWS Neuron single-step Mesh", _const(1, lambda p: p - 1, lambda p: p - 1), multiport=True),
    # AlltoAll
    Algorithm("alltoall", "pairwise", "(p-1) alpha + (p-1)/p n beta", _MPICH + "alltoall_intra_pairwise.c",
              _const(lambda p: p - 1, _q, 0)),
    Algorithm("alltoall", "bruck", "ceil(lg p) alpha + (sum of popcounts below p)/p n beta; = lg p n/2 beta for pow2",
              "Bruck et al. 1997; " + _MPICH + "alltoall_intra_brucks.c",
              _const(_lg, lambda p: T.bruck_alltoall_blocks(p) / p, 0)),
    Algorithm("alltoall", "mesh", "alpha + (p-1)/p n beta (all peers at once, port shared)",
              _MPICH + "alltoall_intra_scattered.c; ASTRA-sim direct", _const(1, _q, 0), multiport=True),
    # Send/Recv
    Algorithm("sendrecv", "ring", "alpha + n beta (each rank sends to its right neighbour)",
              "nccl-tests sendrecv_perf", _const(1, 1, 0)),
]

REGISTRY: dict[tuple[str, str], Algorithm] = {(a.collective, a.name): a for a in ALGORITHMS}


def algorithms_for(collective: str) -> list[Algorithm]:
    name = get_collective(collective).name
    return [a for a in ALGORITHMS if a.collective == name]


def get_algorithm(collective: str, algorithm: str) -> Algorithm:
    name = get_collective(collective).name
    key = (name, str(algorithm).strip().lower())
    if key not in REGISTRY:
        known = ", ".join(a.name for a in algorithms_for(name))
        raise UsageError(f"unknown algorithm {algorithm!r} for {name}: expected one of {known}")
    return REGISTRY[key]


def lowest(costs: list[Cost], names: list[str]) -> tuple[Cost, np.ndarray]:
    """Per size, the cheapest of several costs (ties go to the first listed): its terms and its name."""
    totals = np.vstack([c.total_s for c in costs])
    pick, cols = np.argmin(totals, axis=0), np.arange(totals.shape[1])

    def take(attr):
        return np.vstack([getattr(c, attr) for c in costs])[pick, cols]

    return Cost(take("latency_s"), take("bandwidth_s"), take("compute_s")), np.array(names, dtype=object)[pick]


def _zeros(n: np.ndarray) -> Cost:
    z = np.zeros_like(n)
    return Cost(z, z.copy(), z.copy())


_SMALL_K = 64          # pipelines are searched exhaustively up to here (past the fill/drain region)
_MAX_SEGMENTS = 1 << 20


def _best_segments(alg: Algorithm, p: int, n: np.ndarray, link: Link) -> np.ndarray:
    """The optimal whole number of pipeline segments per size.

    Past the fill region (k >= tree height) a pipeline costs exactly c0 + da k alpha + E n / k, a
    convex function of k, so its integer optimum is the floor or ceiling of sqrt(E n / (da alpha)).
    Below that the profile is irregular, so k = 1.._SMALL_K are tried as well. The minimum over all
    k is taken, which also makes the optimal time monotonic in the size.
    """
    alpha, beta, gamma = link.latency_s, link.seconds_per_byte, link.seconds_per_reduced_byte
    k_max = np.clip(np.floor(n), 1, _MAX_SEGMENTS)
    big = np.array([_SMALL_K, 2 * _SMALL_K])
    a, b, c = (np.broadcast_to(x, big.shape).astype(float) for x in alg.pipeline(p, big))
    da = (a[1] - a[0]) / _SMALL_K * alpha
    e = max((b[0] - b[1]) * 2 * _SMALL_K, 0.0) * beta + max((c[0] - c[1]) * 2 * _SMALL_K, 0.0) * gamma
    with np.errstate(divide="ignore", invalid="ignore"):
        k_star = np.sqrt(e * n / da) if da > 0 else np.full_like(n, np.inf)
    k_star = np.where(np.isfinite(k_star), k_star, k_max)
    best_k = np.clip(np.floor(k_star), 1, k_max)
    best_t = _pipeline_cost(alg, p, n, link, best_k).total_s
    for k in (np.clip(np.ceil(k_star), 1, k_max),):
        t = _pipeline_cost(alg, p, n, link, k).total_s
        best_k, best_t = np.where(t < best_t, k, best_k), np.minimum(t, best_t)
    small_a, small_b, small_c = alg.pipeline(p, np.arange(1, _SMALL_K + 1))
    small_c = np.broadcast_to(small_c, small_a.shape)
    for k in range(1, _SMALL_K + 1):   # scalar coefficients: cheap over many sizes
        t = small_a[k - 1] * alpha + (small_b[k - 1] * beta + small_c[k - 1] * gamma) * n
        better = (t < best_t) & (k <= k_max)
        best_k, best_t = np.where(better, k, best_k), np.where(better, t, best_t)
    return best_k


def _pipeline_cost(alg: Algorithm, p: int, n: np.ndarray, link: Link, k: np.ndarray) -> Cost:
    a, b, c = alg.pipeline(p, k)
    return Cost(a * link.latency_s, b * n * link.seconds_per_byte, c * n * link.seconds_per_reduced_byte,
                segments=np.asarray(k, dtype=float))


def cost(collective: str, algorithm: str, ranks: int, size_bytes, link: Link, segments: int | None = None) -> Cost:
    """Closed-form cost of one algorithm over an array of nccl-tests sizes."""
    alg = get_algorithm(collective, algorithm)
    p = check_ranks(ranks)
    n = np.atleast_1d(formula_bytes(collective, size_bytes)).astype(float)
    if np.any(n < 0):
        raise UsageError(f"negative size in {size_bytes!r}: sizes are bytes >= 0")
    if p == 1:
        return _zeros(n)
    reason = alg.unavailable(p)
    if reason:
        raise NotApplicable(f"{alg.collective} {alg.name} cannot run on {p} ranks: {reason}")
    if alg.pipeline is not None:
        if segments is not None:
            if isinstance(segments, bool) or not isinstance(segments, (int, np.integer)) or segments < 1:
                raise UsageError(f"segments {segments!r} is not a whole number >= 1: give e.g. --segments 8")
            k = np.full(n.shape, float(segments))
        else:
            k = _best_segments(alg, p, n, link)
        return _pipeline_cost(alg, p, n, link, k)
    a, b, c = alg.coefficients(p)
    return Cost(np.full(n.shape, a * link.latency_s), b * n * link.seconds_per_byte,
                c * n * link.seconds_per_reduced_byte)


def coefficients(collective: str, algorithm: str, ranks: int, segments: int | None = None) -> Coefficients:
    """(a, b, c) of T = a alpha + b n beta + c n gamma; pipelined algorithms need `segments`."""
    alg = get_algorithm(collective, algorithm)
    p = check_ranks(ranks)
    if p == 1:
        return 0.0, 0.0, 0.0
    reason = alg.unavailable(p)
    if reason:
        raise NotApplicable(f"{alg.collective} {alg.name} cannot run on {p} ranks: {reason}")
    if alg.pipeline is not None:
        if segments is None:
            raise UsageError(f"{alg.name} is pipelined: its coefficients depend on the segment count; pass segments=")
        a, b, c = alg.pipeline(p, np.array([segments]))
        return float(a[0]), float(b[0]), float(np.asarray(c).ravel()[0])
    return tuple(float(x) for x in alg.coefficients(p))
