"""Vectorized builders: the regular algorithms built straight into the array form (arrays.py).

Each builder makes exactly the schedule of its tuple twin in model/algorithms/ (same steps,
same transfers in the same order, same chunks; tests/test_simulate_arrays.py holds them to it),
in O(steps x ranks) numpy work and, where steps repeat, one run per step class.

Each builder is registered on its algorithm's object (`Algorithm.array_builder`, model/algorithms/).
An algorithm without one is built as tuples and packed (`from_schedule`), so `build_array`
(model/algorithms/build.py) answers every algorithm.
"""

from __future__ import annotations

import numpy as np

from collperf.model import trees as shapes
from collperf.schedule.arrays import (
    ArraySchedule,
    array_step,
    concat_arrays,
    make_arrays,
    reverse_arrays,
)


def _fold(p: int, keep: str = "odd"):
    """model/trees.fold_plan as arrays: survivors (real rank of each virtual rank), gone, kept."""
    fold = shapes.fold_plan(p, keep)
    pairs = np.array(fold.folded, dtype=np.int64).reshape(-1, 2)
    return fold.pow2, np.array(fold.survivors, dtype=np.int64), pairs[:, 0], pairs[:, 1]


# --- ring (Chan et al. 2007; NCCL ring) ---------------------------------------------------------

def ring_allgather(p: int) -> ArraySchedule:
    # step s: rank r forwards block (r - s) to r + 1: one run of p - 1 steps, chunks shifting by -1
    r = np.arange(p)
    run = array_step(r, (r + 1) % p, r, r + 1, False, repeat=p - 1, shift=-1, modulus=p) if p > 1 else None
    return make_arrays("allgather", "ring", p, p, [run])


def ring_reducescatter(p: int) -> ArraySchedule:
    r = np.arange(p)
    block = (r - 1) % p
    run = array_step(r, (r + 1) % p, block, block + 1, True, repeat=p - 1, shift=-1, modulus=p) if p > 1 else None
    return make_arrays("reducescatter", "ring", p, p, [run])


def ring_allreduce(p: int) -> ArraySchedule:
    return concat_arrays(ring_reducescatter(p), ring_allgather(p), "allreduce", "ring")


def ring_sendrecv(p: int) -> ArraySchedule:
    r = np.arange(p)
    return make_arrays("sendrecv", "ring", p, p, [array_step(r, (r + 1) % p, r, r + 1, False)] if p > 1 else [],
                       buffer_chunks=1)


# --- recursive doubling / halving, Rabenseifner (MPICH; Thakur, Rabenseifner & Gropp 2005) ------

def _fold_in(gone, kept, start, stop):
    return array_step(gone, kept, start, stop, True)


def _fold_out(gone, kept, start, stop):
    return array_step(kept, gone, start, stop, False)


def _halving(survivors, pow2, first_chunk, op_reduce=True):
    """Halving among the survivors (model/trees.halving_ranges in closed form): at mask m, v keeps
    [v // m * m, + m) of the virtual blocks and sends its partner's half to v ^ m."""
    v = np.arange(pow2)
    steps, mask = [], pow2 >> 1
    while mask:
        lo = (v ^ mask) // mask * mask
        steps.append(array_step(survivors[v], survivors[v ^ mask], first_chunk(lo), first_chunk(lo + mask), op_reduce))
        mask >>= 1
    return steps


def _doubling(survivors, pow2, first_chunk):
    v = np.arange(pow2)
    steps, mask = [], 1
    while mask < pow2:
        lo = v // mask * mask
        steps.append(array_step(survivors[v], survivors[v ^ mask], first_chunk(lo), first_chunk(lo + mask), False))
        mask <<= 1
    return steps


def recursive_doubling_allgather(p: int) -> ArraySchedule:
    r = np.arange(p)
    steps, mask = [], 1
    while mask < p:
        lo = r & ~(mask - 1)
        steps.append(array_step(r, r ^ mask, lo, lo + mask, False))
        mask <<= 1
    return make_arrays("allgather", "recursive-doubling", p, p, steps)


def recursive_doubling_allreduce(p: int) -> ArraySchedule:
    pow2, v2r, gone, kept = _fold(p)
    v = np.arange(pow2)
    steps, mask = [_fold_in(gone, kept, 0, 1)], 1
    while mask < pow2:
        steps.append(array_step(v2r[v], v2r[v ^ mask], 0, 1, True))
        mask <<= 1
    steps.append(_fold_out(gone, kept, 0, 1))
    return make_arrays("allreduce", "recursive-doubling", p, 1, steps)


def rhd_allreduce(p: int) -> ArraySchedule:
    pow2, v2r, gone, kept = _fold(p)
    same = lambda x: x
    steps = ([_fold_in(gone, kept, 0, pow2)] + _halving(v2r, pow2, same) + _doubling(v2r, pow2, same)
             + [_fold_out(gone, kept, 0, pow2)])
    return make_arrays("allreduce", "rhd", p, pow2, steps)


def recursive_halving_reducescatter(p: int) -> ArraySchedule:
    # virtual rank v owns the final blocks of its survivor and of the rank folded into it: real
    # blocks 2v, 2v + 1 (v < extra) or v + extra, contiguous in v, so a virtual range is a real one
    pow2, v2r, gone, kept = _fold(p)
    extra = p - pow2

    def first_chunk(v):
        return np.where(v < extra, 2 * v, v + extra)

    steps = [_fold_in(gone, kept, 0, p)] + _halving(v2r, pow2, first_chunk) + [_fold_out(gone, kept, gone, gone + 1)]
    return make_arrays("reducescatter", "recursive-halving", p, p, steps)


# --- direct (mesh), pairwise, Bruck, binomial ---------------------------------------------------

def _all_pairs(p: int):
    """Every (r, d), d != r, r-major, d increasing: the order of the tuple builders' loops."""
    r = np.repeat(np.arange(p), p - 1)
    d = np.tile(np.arange(p - 1), p)
    return r, d + (d >= r)


def mesh_allgather(p: int) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("allgather", "mesh", p, p, [array_step(r, d, r, r + 1, False)])


def mesh_reducescatter(p: int) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("reducescatter", "mesh", p, p, [array_step(r, d, d, d + 1, True)])


def mesh_allreduce(p: int) -> ArraySchedule:
    return concat_arrays(mesh_reducescatter(p), mesh_allgather(p), "allreduce", "mesh")


def one_shot_allreduce(p: int) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("allreduce", "one-shot", p, 1, [array_step(r, d, 0, 1, True)])


def mesh_alltoall(p: int) -> ArraySchedule:
    r, d = _all_pairs(p)
    return make_arrays("alltoall", "mesh", p, p * p, [array_step(r, d, r * p + d, r * p + d + 1, False)],
                       buffer_chunks=p)


def pairwise_reducescatter(p: int) -> ArraySchedule:
    r = np.arange(p)
    steps = [array_step(r, (r + s) % p, (r + s) % p, (r + s) % p + 1, True) for s in range(1, p)]
    return make_arrays("reducescatter", "pairwise", p, p, steps)


def pairwise_alltoall(p: int) -> ArraySchedule:
    r = np.arange(p)
    steps = [array_step(r, (r + s) % p, r * p + (r + s) % p, r * p + (r + s) % p + 1, False) for s in range(1, p)]
    return make_arrays("alltoall", "pairwise", p, p * p, steps, buffer_chunks=p)


def bruck_allgather(p: int) -> ArraySchedule:
    # at distance 2^k rank r sends blocks r .. r + count - 1 (mod p) to r - 2^k: a range that
    # wraps past p is two rows of one transfer
    r = np.arange(p)
    steps, distance = [], 1
    while distance < p:
        count = min(distance, p - distance)
        wraps = r + count > p
        order = np.repeat(r, 1 + wraps)
        second = np.zeros(len(order), dtype=bool)
        second[np.flatnonzero(wraps) + np.arange(1, wraps.sum() + 1)] = True
        start = np.where(second, 0, order)
        stop = np.where(second, order + count - p, np.minimum(order + count, p))
        steps.append(array_step(order, (order - distance) % p, start, stop, False, transfer=order))
        distance *= 2
    return make_arrays("allgather", "bruck", p, p, steps)


def binomial_broadcast(p: int) -> ArraySchedule:
    steps, distance = [], 1
    while distance < p:
        r = np.arange(min(distance, p - distance))
        steps.append(array_step(r, r + distance, 0, 1, False))
        distance *= 2
    return make_arrays("broadcast", "binomial", p, 1, steps)


def binomial_reduce(p: int) -> ArraySchedule:
    return reverse_arrays(binomial_broadcast(p), "reduce", "binomial", reduce=True)


def reduce_broadcast_allreduce(p: int) -> ArraySchedule:
    return concat_arrays(binomial_reduce(p), binomial_broadcast(p), "allreduce", "reduce-broadcast")


def bruck_alltoall(p: int) -> ArraySchedule:
    # block (s, d), chunk s p + d, moves by the bits of (d - s) mod p, lowest first: at step k every block
    # with bit k set goes from where it is, x, to x + 2^k. One transfer per sender, its chunks sorted; a
    # transfer's rows are its runs of consecutive chunk numbers (as arrays.from_schedule packs the tuple twin)
    s, d = (a.ravel() for a in np.meshgrid(np.arange(p), np.arange(p), indexing="ij"))
    chunk, shift, where = s * p + d, (d - s) % p, s.copy()
    steps = []
    for k in range(shapes.ceil_log2(p)):
        moving = np.flatnonzero((shift >> k) & 1)
        order = moving[np.lexsort((chunk[moving], where[moving]))]
        x, c = where[order], chunk[order]
        new_row = np.ones(len(order), dtype=bool)
        new_row[1:] = (x[1:] != x[:-1]) | (c[1:] != c[:-1] + 1)
        starts = np.flatnonzero(new_row)
        stops = np.append(starts[1:], len(order))
        senders = x[starts]
        transfer = np.cumsum(np.r_[True, senders[1:] != senders[:-1]]) - 1
        rows_are_transfers = transfer[-1] + 1 == len(starts) if len(starts) else True
        steps.append(array_step(senders, (senders + (1 << k)) % p, c[starts], c[stops - 1] + 1, False,
                                None if rows_are_transfers else transfer))
        where[moving] = (where[moving] + (1 << k)) % p
    return make_arrays("alltoall", "bruck", p, p * p, steps, buffer_chunks=p)
