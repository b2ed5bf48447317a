"""Evaluating the closed forms of model/algorithms over sizes and networks: Cost, cost(), coefficients().

Each algorithm's closed form T(p, n) = a*alpha + b*n*beta + c*n*gamma (Thakur, Rabenseifner
and Gropp, IJHPCA 2005) is defined with its schedule in model/algorithms/<family>.py; here n is the formula bytes of
collectives.formula_bytes, beta = 1/bandwidth, gamma = 1/reduce bandwidth, and pipelined
algorithms get their best whole number of segments per size.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from collperf.collectives import check_ranks, formula_bytes
from collperf.errors import UsageError
from collperf.model.algorithms import Algorithm, Coefficients, get_algorithm
from collperf.model.network import Link


@dataclass(frozen=True)
class Phase:
    """One phase of a composed (two-level) algorithm."""

    name: str  # e.g. "intra reducescatter"
    algorithms: tuple[str, ...]  # the algorithm used, per size
    ranks: int
    link: str
    cost: "Cost"


@dataclass(frozen=True)
class Cost:
    """Seconds, split into latency, bandwidth and compute terms; arrays over sizes."""

    latency_s: npt.NDArray[np.float64]
    bandwidth_s: npt.NDArray[np.float64]
    compute_s: npt.NDArray[np.float64]
    segments: npt.NDArray[np.float64] | None = None  # pipeline segments per size, for pipelined algorithms
    phases: tuple[Phase, ...] = field(default=())

    @property
    def total_s(self) -> npt.NDArray[np.float64]:
        return self.latency_s + self.bandwidth_s + self.compute_s

    def __add__(self, other: "Cost") -> "Cost":
        return Cost(
            self.latency_s + other.latency_s,
            self.bandwidth_s + other.bandwidth_s,
            self.compute_s + other.compute_s,
            phases=self.phases + other.phases,
        )


class NotApplicable(UsageError):
    """An algorithm that cannot run at this rank count."""


def lowest(costs: list[Cost], names: list[str]) -> tuple[Cost, np.ndarray]:
    """Per size, the cheapest of several costs (ties go to the first listed): its terms and its name."""
    totals = np.vstack([c.total_s for c in costs])
    pick, cols = np.argmin(totals, axis=0), np.arange(totals.shape[1])

    def take(attr: str) -> npt.NDArray[np.float64]:
        terms: npt.NDArray[np.float64] = np.vstack([getattr(c, attr) for c in costs])[pick, cols]
        return terms

    return Cost(take("latency_s"), take("bandwidth_s"), take("compute_s")), np.array(names, dtype=object)[pick]


def _zeros(n: np.ndarray) -> Cost:
    z = np.zeros_like(n)
    return Cost(z, z.copy(), z.copy())


_SMALL_K = 64  # pipelines are searched exhaustively up to here (past the fill/drain region)
_MAX_SEGMENTS = 1 << 20


def _best_segments(alg: Algorithm, p: int, n: np.ndarray, link: Link) -> np.ndarray:
    """The optimal whole number of pipeline segments per size.

    Past the fill region (k >= tree height) a pipeline costs exactly c0 + da k alpha + E n / k, a
    convex function of k, so its integer optimum is the floor or ceiling of sqrt(E n / (da alpha)).
    Below that the profile is irregular, so k = 1.._SMALL_K are tried as well. The minimum over all
    k is taken, which also makes the optimal time monotonic in the size.
    """
    assert alg.pipeline is not None  # called for pipelined algorithms only
    alpha, beta, gamma = link.latency_s, link.seconds_per_byte, link.seconds_per_reduced_byte
    k_max = np.clip(np.floor(n), 1, _MAX_SEGMENTS)
    big = np.array([_SMALL_K, 2 * _SMALL_K])
    a, b, c = (np.broadcast_to(x, big.shape).astype(float) for x in alg.pipeline(p, big))
    da = (a[1] - a[0]) / _SMALL_K * alpha
    e = max((b[0] - b[1]) * 2 * _SMALL_K, 0.0) * beta + max((c[0] - c[1]) * 2 * _SMALL_K, 0.0) * gamma
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):  # inf: handled below
        k_star = np.sqrt(e * n / da) if da > 0 else np.full_like(n, np.inf)
    k_star = np.where(np.isfinite(k_star), k_star, k_max)
    best_k = np.clip(np.floor(k_star), 1, k_max)
    best_t = _pipeline_cost(alg, p, n, link, best_k).total_s
    for k_up in (np.clip(np.ceil(k_star), 1, k_max),):
        t = _pipeline_cost(alg, p, n, link, k_up).total_s
        best_k, best_t = np.where(t < best_t, k_up, best_k), np.minimum(t, best_t)
    small_a, small_b, small_c = alg.pipeline(p, np.arange(1, _SMALL_K + 1))
    small_c = np.broadcast_to(small_c, small_a.shape)
    for k in range(1, _SMALL_K + 1):  # scalar coefficients: cheap over many sizes
        t = small_a[k - 1] * alpha + (small_b[k - 1] * beta + small_c[k - 1] * gamma) * n
        better = (t < best_t) & (k <= k_max)
        best_k, best_t = np.where(better, k, best_k), np.where(better, t, best_t)
    return best_k


def _pipeline_cost(alg: Algorithm, p: int, n: np.ndarray, link: Link, k: np.ndarray) -> Cost:
    assert alg.pipeline is not None  # called for pipelined algorithms only
    a, b, c = alg.pipeline(p, k)
    return Cost(
        a * link.latency_s,
        b * n * link.seconds_per_byte,
        c * n * link.seconds_per_reduced_byte,
        segments=np.asarray(k, dtype=float),
    )


def cost(
    collective: str, algorithm: str, ranks: int, size_bytes: npt.ArrayLike, link: Link, segments: int | None = None
) -> Cost:
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
    assert alg.coefficients is not None  # Algorithm: exactly one closed form, and it is not pipelined
    a, b, c = alg.coefficients(p)
    return Cost(
        np.full(n.shape, a * link.latency_s), b * n * link.seconds_per_byte, c * n * link.seconds_per_reduced_byte
    )


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
    assert alg.coefficients is not None  # Algorithm: exactly one closed form, and it is not pipelined
    closed = alg.coefficients(p)
    return float(closed[0]), float(closed[1]), float(closed[2])
