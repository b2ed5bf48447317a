"""Tree algorithms: binomial trees (MST), the pipelined chain, NCCL's double binary tree.

The tree shapes and their pipelined profiles are model/trees.py, shared by cost and schedule.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from collperf.model import trees as shapes
from collperf.model.algorithms.base import MPICH, Coefficients, Pipeline, algorithm, const, lg, q
from collperf.schedule.arrays import ArraySchedule, array_step, concat_arrays, make_arrays, reverse_arrays
from collperf.schedule.ir import COPY, Schedule, Transfer, concat, make, reverse, step


def _binomial(a_per_step: float = 1, b_per_step: float = 1, c_per_step: float = 0) -> Callable[[int], Coefficients]:
    return lambda p: (lg(p) * a_per_step, lg(p) * b_per_step, lg(p) * c_per_step)


def _chain(p: int, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    # T = (p - 2 + k)(alpha + n beta / k): segment j leaves rank i at step i + j.
    k = np.asarray(k, dtype=float)
    steps = p - 2 + k
    return steps, steps / k, np.zeros_like(k)


def _tree_pipeline(forest: Callable[[int], tuple[list[int], list[int]]], directions: int, reduces: bool) -> Pipeline:
    """Pipelined forest (k segments per tree). directions=1: one pass (broadcast or reduce);
    2: reduce up then broadcast down (allreduce)."""

    def coefficients(p: int, k: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        trees = forest(p)
        steps, port, reduced = shapes.tree_profile(trees, k)
        segment = 1.0 / (len(trees) * np.asarray(k, dtype=float))  # of n
        return directions * steps, directions * port * segment, (reduced * segment if reduces else 0 * steps)

    return coefficients


def _dtree(p: int) -> tuple[list[int], list[int]]:
    return shapes.nccl_dtree_parents(p)


def _rooted_dtree(p: int) -> tuple[list[int], list[int]]:
    return shapes.rooted_dtree_parents(p, 0)


# ---------------------------------------------------------------------------------------------
# Binomial trees


def broadcast_binomial_arrays(p: int, segments: int = 1) -> ArraySchedule:
    steps, distance = [], 1
    while distance < p:
        r = np.arange(min(distance, p - distance))
        steps.append(array_step(r, r + distance, 0, 1, False))
        distance *= 2
    return make_arrays("broadcast", "binomial", p, 1, steps)


@algorithm(
    "broadcast",
    "binomial",
    "ceil(lg p) alpha + ceil(lg p) n beta",
    MPICH + "bcast_intra_binomial.c",
    coefficients=_binomial(),
    array_builder=broadcast_binomial_arrays,
)
def broadcast_binomial(p: int, segments: int = 1) -> Schedule:
    # step k: every rank that has the data (r < 2^k) sends it all to r + 2^k
    steps = []
    distance = 1
    while distance < p:
        steps.append(step(Transfer(r, r + distance, (0,), COPY) for r in range(distance) if r + distance < p))
        distance *= 2
    return make("broadcast", "binomial", p, 1, steps)


def reduce_binomial_arrays(p: int, segments: int = 1) -> ArraySchedule:
    return reverse_arrays(broadcast_binomial_arrays(p), "reduce", "binomial", reduce=True)


@algorithm(
    "reduce",
    "binomial",
    "ceil(lg p) (alpha + n beta + n gamma)",
    MPICH + "reduce_intra_binomial.c",
    coefficients=_binomial(1, 1, 1),
    array_builder=reduce_binomial_arrays,
)
def reduce_binomial(p: int, segments: int = 1) -> Schedule:
    return reverse(broadcast_binomial(p), "reduce", "binomial", reduce=True)


def allreduce_reduce_broadcast_arrays(p: int, segments: int = 1) -> ArraySchedule:
    return concat_arrays(reduce_binomial_arrays(p), broadcast_binomial_arrays(p), "allreduce", "reduce-broadcast")


@algorithm(
    "allreduce",
    "reduce-broadcast",
    "2 ceil(lg p) alpha + 2 ceil(lg p) n beta + ceil(lg p) n gamma",
    "binomial reduce + binomial broadcast (MPICH rows composed)",
    coefficients=_binomial(2, 2, 1),
    array_builder=allreduce_reduce_broadcast_arrays,
)
def allreduce_reduce_broadcast(p: int, segments: int = 1) -> Schedule:
    return concat(reduce_binomial(p), broadcast_binomial(p), "allreduce", "reduce-broadcast")


@algorithm(
    "scatter",
    "binomial",
    "ceil(lg p) alpha + (p-1)/p n beta",
    MPICH + "scatter_intra_binomial.c",
    coefficients=const(lg, q, 0),
)
def scatter_binomial(p: int, segments: int = 1) -> Schedule:
    # top-down: with mask m, each rank r holding blocks [r, r + 2m) hands [r + m, r + 2m) to r + m
    steps = []
    mask = 1 << max(0, shapes.ceil_log2(p) - 1)
    while mask >= 1 and p > 1:
        steps.append(
            step(
                Transfer(r, r + mask, range(r + mask, min(r + 2 * mask, p)), COPY)
                for r in range(0, p, 2 * mask)
                if r + mask < p
            )
        )
        mask //= 2
    return make("scatter", "binomial", p, p, steps)


@algorithm(
    "gather",
    "binomial",
    "ceil(lg p) alpha + (p-1)/p n beta",
    MPICH + "gather_intra_binomial.c",
    coefficients=const(lg, q, 0),
)
def gather_binomial(p: int, segments: int = 1) -> Schedule:
    return reverse(scatter_binomial(p), "gather", "binomial", reduce=False)


# ---------------------------------------------------------------------------------------------
# Pipelined chain and double binary tree


@algorithm(
    "broadcast",
    "chain",
    "(p-2+k)(alpha + n beta / k), k* = sqrt((p-2) n beta / alpha)",
    "pipelined chain; Bar-Noy & Kipnis 1994 for the round bound",
    pipeline=_chain,
)
def broadcast_chain(p: int, segments: int = 1) -> Schedule:
    # segment j leaves rank i at step i + j
    k = segments
    steps = [step(Transfer(i, i + 1, (s - i,), COPY) for i in range(p - 1) if 0 <= s - i < k) for s in range(p - 2 + k)]
    return make("broadcast", "chain", p, k, steps, segments=k)


def _forest_broadcast(trees: Sequence[list[int]], segments: int, collective: str, algorithm: str) -> Schedule:
    """Pipelined broadcast down a forest: tree t carries chunks [t k, (t+1) k); a rank at depth d
    sends segment j (0-based) to all its children at step d + j."""
    p, k = len(trees[0]), segments
    height = shapes.tree_height(trees)
    by_step: list[list[Transfer]] = [[] for _ in range(k + height - 1)] if p > 1 else []
    for t, parent in enumerate(trees):
        depth = shapes.depths_of(parent)
        for child, up in enumerate(parent):
            if up >= 0:
                for j in range(k):
                    by_step[depth[up] + j].append(Transfer(up, child, (t * k + j,), COPY))
    return make(collective, algorithm, p, len(trees) * k, [step(ts) for ts in by_step], segments=k)


@algorithm(
    "broadcast",
    "double-binary-tree",
    "(k+H-1) alpha + (steps' busiest-port segments) n beta / 2k; -> n beta for large n",
    "Sanders, Speck & Traeff 2009 two-tree; NCCL trees.cc double binary tree",
    pipeline=_tree_pipeline(_rooted_dtree, 1, False),
)
def broadcast_double_binary_tree(p: int, segments: int = 1) -> Schedule:
    if p == 1:
        return make("broadcast", "double-binary-tree", 1, 2 * segments, [])
    return _forest_broadcast(_rooted_dtree(p), segments, "broadcast", "double-binary-tree")


@algorithm(
    "reduce",
    "double-binary-tree",
    "time reversal of the double-binary-tree broadcast, plus reduction",
    "Sanders, Speck & Traeff 2009 two-tree reduction",
    pipeline=_tree_pipeline(_rooted_dtree, 1, True),
)
def reduce_double_binary_tree(p: int, segments: int = 1) -> Schedule:
    return reverse(broadcast_double_binary_tree(p, segments), "reduce", "double-binary-tree", reduce=True)


@algorithm(
    "allreduce",
    "double-binary-tree",
    "reduce up and broadcast down NCCL's two complementary trees, n/2 each, k segments; -> 2 n beta",
    "NCCL trees.cc ncclGetDtree; Sanders et al. 2009",
    pipeline=_tree_pipeline(_dtree, 2, True),
)
def allreduce_double_binary_tree(p: int, segments: int = 1) -> Schedule:
    if p == 1:
        return make("allreduce", "double-binary-tree", 1, 2 * segments, [])
    down = _forest_broadcast(_dtree(p), segments, "allreduce", "double-binary-tree")
    up = reverse(down, "allreduce", "double-binary-tree", reduce=True)
    return concat(up, down, "allreduce", "double-binary-tree")
