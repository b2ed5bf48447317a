"""Recursive doubling / halving and Rabenseifner (MPICH; Thakur, Rabenseifner & Gropp 2005).

A non-power-of-two p runs on p' = 2^floor(lg p) ranks after the extra ones fold in: in pairs
(2i, 2i+1), i < p - p', one rank reduces its whole vector into the other first and receives the
result last (model/trees.fold_plan).
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np
import numpy.typing as npt

from collperf.model import trees as shapes
from collperf.model.algorithms.base import Coefficients, MPICH, algorithm, const, fold, lg, needs_pow2, q
from collperf.schedule.arrays import ArraySchedule, ArrayStep, array_step, make_arrays
from collperf.schedule.ir import COPY, REDUCE, Schedule, Step, Transfer, make, step

# ---------------------------------------------------------------------------------------------
# Closed forms


def _recursive_halving_rs(p: int) -> Coefficients:
    # Fold (alpha + n beta + n gamma), halving steps of the largest sent range, unfold of one block
    # (alpha + n/p beta). MPICH's header writes n(1+(p-1+n)/p)beta for the non-pow2 case and omits
    # the final block's transfer; the schedule moves it, so it is counted here.
    pow2 = shapes.floor_pow2(p)
    sent_chunks = sum(shapes.recursive_halving_chunk_steps(p))
    f = fold(p)
    a = math.log2(pow2) + 2 * f
    b = f * (1 + 1 / p) + sent_chunks / p
    c = f * 1 + sent_chunks / p
    return a, b, c


def _rhd_allreduce(p: int) -> Coefficients:
    # Rabenseifner on p' = 2^floor(lg p) ranks and p' chunks, with fold-in and fold-out
    # (MPICH allreduce_intra_reduce_scatter_allgather.c; its (p-1)/p is (p'-1)/p' for non-pow2).
    pow2 = shapes.floor_pow2(p)
    f = fold(p)
    return 2 * math.log2(pow2) + 2 * f, 2 * q(pow2) + 2 * f, q(pow2) + f


def _rhd_reduce(p: int) -> Coefficients:
    # MPICH reduce_intra_reduce_scatter_gather.c: odd ranks fold into their left neighbour.
    pow2 = shapes.floor_pow2(p)
    f = fold(p)
    return 2 * math.log2(pow2) + f, 2 * q(pow2) + f, q(pow2) + f


def _recursive_doubling_allreduce(p: int) -> Coefficients:
    lg_pow2 = math.log2(shapes.floor_pow2(p))
    f = fold(p)
    return lg_pow2 + 2 * f, lg_pow2 + 2 * f, lg_pow2 + f


# ---------------------------------------------------------------------------------------------
# Schedules


def _fold_in(fold: shapes.Fold, chunks: Sequence[int]) -> Step:
    return step(Transfer(gone, kept, chunks, REDUCE) for gone, kept in fold.folded)


def _fold_out(fold: shapes.Fold, chunks_of: Callable[[int], Sequence[int]]) -> Step:
    return step(Transfer(kept, gone, chunks_of(gone), COPY) for gone, kept in fold.folded)


# Array forms: each is the schedule of its tuple twin below (same steps, transfers, chunks, in order),
# built in numpy as schedule/arrays.py steps; tests/test_simulate_arrays.py holds them to it.


def _fold_arrays(p: int, keep: str = "odd") -> tuple[int, np.ndarray, np.ndarray, np.ndarray]:
    """model/trees.fold_plan as arrays: survivors (real rank of each virtual rank), gone, kept."""
    fold = shapes.fold_plan(p, keep)
    pairs = np.array(fold.folded, dtype=np.int64).reshape(-1, 2)
    return fold.pow2, np.array(fold.survivors, dtype=np.int64), pairs[:, 0], pairs[:, 1]


def _fold_in_arrays(gone: np.ndarray, kept: np.ndarray, start: npt.ArrayLike, stop: npt.ArrayLike) -> ArrayStep | None:
    return array_step(gone, kept, start, stop, True)


def _fold_out_arrays(gone: np.ndarray, kept: np.ndarray, start: npt.ArrayLike, stop: npt.ArrayLike) -> ArrayStep | None:
    return array_step(kept, gone, start, stop, False)


def _halving_arrays(
    survivors: np.ndarray, pow2: int, first_chunk: Callable[[np.ndarray], np.ndarray], op_reduce: bool = True
) -> list[ArrayStep | None]:
    """Halving among the survivors (model/trees.halving_ranges in closed form): at mask m, v keeps
    [v // m * m, + m) of the virtual blocks and sends its partner's half to v ^ m."""
    v = np.arange(pow2)
    steps, mask = [], pow2 >> 1
    while mask:
        lo = (v ^ mask) // mask * mask
        steps.append(array_step(survivors[v], survivors[v ^ mask], first_chunk(lo), first_chunk(lo + mask), op_reduce))
        mask >>= 1
    return steps


def _doubling_arrays(
    survivors: np.ndarray, pow2: int, first_chunk: Callable[[np.ndarray], np.ndarray]
) -> list[ArrayStep | None]:
    v = np.arange(pow2)
    steps, mask = [], 1
    while mask < pow2:
        lo = v // mask * mask
        steps.append(array_step(survivors[v], survivors[v ^ mask], first_chunk(lo), first_chunk(lo + mask), False))
        mask <<= 1
    return steps


def allgather_recursive_doubling_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r = np.arange(p)
    steps, mask = [], 1
    while mask < p:
        lo = r & ~(mask - 1)
        steps.append(array_step(r, r ^ mask, lo, lo + mask, False))
        mask <<= 1
    return make_arrays("allgather", "recursive-doubling", p, p, steps)


@algorithm(
    "allgather",
    "recursive-doubling",
    "lg p alpha + (p-1)/p n beta (power-of-two p)",
    MPICH + "allgather_intra_recursive_doubling.c",
    coefficients=const(lg, q, 0),
    requires=needs_pow2,
    array_builder=allgather_recursive_doubling_arrays,
)
def allgather_recursive_doubling(p: int, segments: int = 1) -> Schedule:
    # power-of-two p: with mask m, rank r sends its aligned block of m blocks to r ^ m
    steps, mask = [], 1
    while mask < p:
        steps.append(
            step(Transfer(r, r ^ mask, range(r & ~(mask - 1), (r & ~(mask - 1)) + mask), COPY) for r in range(p))
        )
        mask *= 2
    return make("allgather", "recursive-doubling", p, p, steps)


def allreduce_recursive_doubling_arrays(p: int, segments: int = 1) -> ArraySchedule:
    pow2, v2r, gone, kept = _fold_arrays(p)
    v = np.arange(pow2)
    steps, mask = [_fold_in_arrays(gone, kept, 0, 1)], 1
    while mask < pow2:
        steps.append(array_step(v2r[v], v2r[v ^ mask], 0, 1, True))
        mask <<= 1
    steps.append(_fold_out_arrays(gone, kept, 0, 1))
    return make_arrays("allreduce", "recursive-doubling", p, 1, steps)


@algorithm(
    "allreduce",
    "recursive-doubling",
    "lg p (alpha + n beta + n gamma) (+ fold-in if p != p')",
    MPICH + "allreduce_intra_recursive_doubling.c",
    coefficients=_recursive_doubling_allreduce,
    array_builder=allreduce_recursive_doubling_arrays,
)
def allreduce_recursive_doubling(p: int, segments: int = 1) -> Schedule:
    fold = shapes.fold_plan(p, "odd")
    v2r = fold.survivors
    steps = [_fold_in(fold, (0,))]
    mask = 1
    while mask < fold.pow2:
        steps.append(step(Transfer(v2r[v], v2r[v ^ mask], (0,), REDUCE) for v in range(fold.pow2)))
        mask *= 2
    steps.append(_fold_out(fold, lambda r: (0,)))
    return make("allreduce", "recursive-doubling", p, 1, steps)


def _halving_steps(
    fold: shapes.Fold, chunks_of_range: Callable[[int, int], Sequence[int]], op: str = REDUCE
) -> list[Step]:
    """Recursive halving among the survivors: v sends the chunks of the half it gives up to v ^ mask."""
    v2r = fold.survivors
    return [
        step(Transfer(v2r[v], v2r[v ^ mask], chunks_of_range(*sent[v]), op) for v in range(fold.pow2))
        for mask, _, sent in shapes.halving_ranges(fold.pow2)
    ]


def _doubling_steps(fold: shapes.Fold, chunks_of_range: Callable[[int, int], Sequence[int]]) -> list[Step]:
    """The mirror image of the halving: v sends the (now complete) half it kept back to v ^ mask."""
    v2r = fold.survivors
    return [
        step(Transfer(v2r[v], v2r[v ^ mask], chunks_of_range(*kept[v]), COPY) for v in range(fold.pow2))
        for mask, kept, _ in reversed(shapes.halving_ranges(fold.pow2))
    ]


def reducescatter_recursive_halving_arrays(p: int, segments: int = 1) -> ArraySchedule:
    # virtual rank v owns the final blocks of its survivor and of the rank folded into it: real
    # blocks 2v, 2v + 1 (v < extra) or v + extra, contiguous in v, so a virtual range is a real one
    pow2, v2r, gone, kept = _fold_arrays(p)
    extra = p - pow2

    def first_chunk(v: np.ndarray) -> np.ndarray:
        return np.where(v < extra, 2 * v, v + extra)

    steps = (
        [_fold_in_arrays(gone, kept, 0, p)]
        + _halving_arrays(v2r, pow2, first_chunk)
        + [_fold_out_arrays(gone, kept, gone, gone + 1)]
    )
    return make_arrays("reducescatter", "recursive-halving", p, p, steps)


@algorithm(
    "reducescatter",
    "recursive-halving",
    "lg p alpha + (p-1)/p n (beta + gamma) for pow2; fold-in otherwise",
    MPICH + "reduce_scatter_intra_recursive_halving.c",
    coefficients=_recursive_halving_rs,
    array_builder=reducescatter_recursive_halving_arrays,
)
def reducescatter_recursive_halving(p: int, segments: int = 1) -> Schedule:
    # p chunks, block b final at rank b. Survivor v stands for its own block and, if it absorbed
    # a folded rank, that rank's block too; a virtual range [lo, hi) is the blocks of v in [lo, hi).
    fold = shapes.fold_plan(p, "odd")
    blocks_of = [
        sorted([fold.survivors[v]] + [g for g, k in fold.folded if k == fold.survivors[v]]) for v in range(fold.pow2)
    ]

    def chunks(lo: int, hi: int) -> Sequence[int]:
        return range(lo, hi) if not fold.extra else [b for v in range(lo, hi) for b in blocks_of[v]]

    steps = [_fold_in(fold, range(p))] + _halving_steps(fold, chunks) + [_fold_out(fold, lambda r: (r,))]
    return make("reducescatter", "recursive-halving", p, p, steps)


def allreduce_rhd_arrays(p: int, segments: int = 1) -> ArraySchedule:
    pow2, v2r, gone, kept = _fold_arrays(p)
    same = lambda x: x
    steps = (
        [_fold_in_arrays(gone, kept, 0, pow2)]
        + _halving_arrays(v2r, pow2, same)
        + _doubling_arrays(v2r, pow2, same)
        + [_fold_out_arrays(gone, kept, 0, pow2)]
    )
    return make_arrays("allreduce", "rhd", p, pow2, steps)


@algorithm(
    "allreduce",
    "rhd",
    "2 lg p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma (+ 2 alpha + 2 n beta + n gamma if p != p')",
    MPICH + "allreduce_intra_reduce_scatter_allgather.c (Rabenseifner)",
    coefficients=_rhd_allreduce,
    array_builder=allreduce_rhd_arrays,
)
def allreduce_rhd(p: int, segments: int = 1) -> Schedule:
    # Rabenseifner on p' chunks: fold in, halving reduce-scatter, doubling allgather, fold out
    fold = shapes.fold_plan(p, "odd")
    whole = range(fold.pow2)
    steps = (
        [_fold_in(fold, whole)]
        + _halving_steps(fold, range)
        + _doubling_steps(fold, range)
        + [_fold_out(fold, lambda r: whole)]
    )
    return make("allreduce", "rhd", p, fold.pow2, steps)


@algorithm(
    "reduce",
    "rhd",
    "2 lg p' alpha + 2 (p'-1)/p' n beta + (p'-1)/p' n gamma (+ alpha + n beta + n gamma fold-in if p != p')",
    MPICH + "reduce_intra_reduce_scatter_gather.c (Rabenseifner)",
    coefficients=_rhd_reduce,
)
def reduce_rhd(p: int, segments: int = 1) -> Schedule:
    # MPICH reduce_intra_reduce_scatter_gather: odd ranks fold into their left neighbour (so rank 0
    # survives), halving reduce-scatter, then a binomial gather of the reduced chunks to rank 0
    fold = shapes.fold_plan(p, "even")
    v2r = fold.survivors
    steps = [_fold_in(fold, range(fold.pow2))] + _halving_steps(fold, range)
    mask = 1
    while mask < fold.pow2:
        steps.append(
            step(Transfer(v2r[v], v2r[v - mask], range(v, v + mask), COPY) for v in range(mask, fold.pow2, 2 * mask))
        )
        mask *= 2
    return make("reduce", "rhd", p, fold.pow2, steps)
