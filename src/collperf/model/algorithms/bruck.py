"""Bruck et al. 1997: dissemination allgather and all-to-all in ceil(lg p) steps for any p, and
van de Geijn's broadcast (binomial scatter + Bruck allgather).

Chunks keep their absolute numbers, so the local rotations of the paper are not needed.
"""

from __future__ import annotations

import numpy as np

from collperf.model import trees as shapes
from collperf.model.algorithms.base import MPICH, algorithm, const, lg, q
from collperf.model.algorithms.trees import scatter_binomial
from collperf.schedule.arrays import ArraySchedule, array_step, make_arrays
from collperf.schedule.ir import COPY, Schedule, Transfer, make, step


def allgather_arrays(p: int, segments: int = 1) -> ArraySchedule:
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


@algorithm(
    "allgather",
    "bruck",
    "ceil(lg p) alpha + (p-1)/p n beta (any p)",
    "Bruck et al. 1997; " + MPICH + "allgather_intra_brucks.c",
    coefficients=const(lg, q, 0),
    array_builder=allgather_arrays,
)
def allgather(p: int, segments: int = 1) -> Schedule:
    # at distance 2^k, rank r sends the blocks it holds, r .. r + cnt - 1, to r - 2^k
    steps, distance = [], 1
    while distance < p:
        count = min(distance, p - distance)
        steps.append(
            step(Transfer(r, (r - distance) % p, tuple((r + i) % p for i in range(count)), COPY) for r in range(p))
        )
        distance *= 2
    return make("allgather", "bruck", p, p, steps)


def alltoall_arrays(p: int, segments: int = 1) -> ArraySchedule:
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
        steps.append(
            array_step(
                senders,
                (senders + (1 << k)) % p,
                c[starts],
                c[stops - 1] + 1,
                False,
                None if rows_are_transfers else transfer,
            )
        )
        where[moving] = (where[moving] + (1 << k)) % p
    return make_arrays("alltoall", "bruck", p, p * p, steps, buffer_chunks=p)


@algorithm(
    "alltoall",
    "bruck",
    "ceil(lg p) alpha + (sum of popcounts below p)/p n beta; = lg p n/2 beta for pow2",
    "Bruck et al. 1997; " + MPICH + "alltoall_intra_brucks.c",
    coefficients=const(lg, lambda p: shapes.bruck_alltoall_blocks(p) / p, 0),
    array_builder=alltoall_arrays,
)
def alltoall(p: int, segments: int = 1) -> Schedule:
    # block (s, d) moves by the bits of its displacement (d - s) mod p, lowest bit first
    where = {(s, d): s for s in range(p) for d in range(p)}
    steps = []
    for k in range(shapes.ceil_log2(p)):
        moves: dict[int, list[int]] = {}
        for (s, d), x in where.items():
            if ((d - s) % p) >> k & 1:
                moves.setdefault(x, []).append(s * p + d)
                where[(s, d)] = (x + (1 << k)) % p
        steps.append(step(Transfer(x, (x + (1 << k)) % p, tuple(sorted(c)), COPY) for x, c in sorted(moves.items())))
    return make("alltoall", "bruck", p, p * p, steps, buffer_chunks=p)


@algorithm(
    "broadcast",
    "scatter-allgather",
    "2 ceil(lg p) alpha + 2 (p-1)/p n beta  (binomial scatter + Bruck allgather; van de Geijn)",
    MPICH + "bcast_intra_scatter_recursive_doubling_allgather.c",
    coefficients=const(lambda p: 2 * lg(p), lambda p: 2 * q(p), 0),
)
def broadcast_scatter_allgather(p: int, segments: int = 1) -> Schedule:
    """van de Geijn: binomial scatter of p blocks, then a Bruck allgather of them."""
    scatter = scatter_binomial(p)
    return make("broadcast", "scatter-allgather", p, p, scatter.steps + allgather(p).steps)
