"""Ring (bucket) algorithms: each rank talks only to its neighbours (Chan et al. 2007; NCCL ring)."""

from __future__ import annotations

import numpy as np

from collperf.model.algorithms.base import CHAN, MPICH, algorithm, const, q
from collperf.schedule.arrays import ArraySchedule, array_step, concat_arrays, make_arrays
from collperf.schedule.ir import COPY, REDUCE, Schedule, Transfer, concat, make, step


def allgather_arrays(p: int, segments: int = 1) -> ArraySchedule:
    # step s: rank r forwards block (r - s) to r + 1: one run of p - 1 steps, chunks shifting by -1
    r = np.arange(p)
    run = array_step(r, (r + 1) % p, r, r + 1, False, repeat=p - 1, shift=-1, modulus=p) if p > 1 else None
    return make_arrays("allgather", "ring", p, p, [run])


@algorithm(
    "allgather",
    "ring",
    "(p-1) alpha + (p-1)/p n beta",
    MPICH + "allgather_intra_ring.c; " + CHAN,
    coefficients=const(lambda p: p - 1, q, 0),
    array_builder=allgather_arrays,
)
def allgather(p: int, segments: int = 1) -> Schedule:
    # step s: rank r forwards block (r - s) to r + 1
    steps = [step(Transfer(r, (r + 1) % p, ((r - s) % p,), COPY) for r in range(p)) for s in range(p - 1)]
    return make("allgather", "ring", p, p, steps)


def reducescatter_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r = np.arange(p)
    block = (r - 1) % p
    run = array_step(r, (r + 1) % p, block, block + 1, True, repeat=p - 1, shift=-1, modulus=p) if p > 1 else None
    return make_arrays("reducescatter", "ring", p, p, [run])


@algorithm(
    "reducescatter",
    "ring",
    "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma",
    CHAN + " (bucket); NCCL ring",
    coefficients=const(lambda p: p - 1, q, q),
    array_builder=reducescatter_arrays,
)
def reducescatter(p: int, segments: int = 1) -> Schedule:
    # step s: rank r reduces block (r - s - 1) into r + 1; block b starts at b + 1 and, summing
    # as it goes round, arrives complete at its owner b after p - 1 steps
    steps = [step(Transfer(r, (r + 1) % p, ((r - s - 1) % p,), REDUCE) for r in range(p)) for s in range(p - 1)]
    return make("reducescatter", "ring", p, p, steps)


def allreduce_arrays(p: int, segments: int = 1) -> ArraySchedule:
    return concat_arrays(reducescatter_arrays(p), allgather_arrays(p), "allreduce", "ring")


@algorithm(
    "allreduce",
    "ring",
    "2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma",
    CHAN + "; Patarasuk & Yuan 2009; NCCL ring",
    coefficients=const(lambda p: 2 * (p - 1), lambda p: 2 * q(p), q),
    array_builder=allreduce_arrays,
)
def allreduce(p: int, segments: int = 1) -> Schedule:
    return concat(reducescatter(p), allgather(p), "allreduce", "ring")


def sendrecv_arrays(p: int, segments: int = 1) -> ArraySchedule:
    r = np.arange(p)
    return make_arrays(
        "sendrecv", "ring", p, p, [array_step(r, (r + 1) % p, r, r + 1, False)] if p > 1 else [], buffer_chunks=1
    )


@algorithm(
    "sendrecv",
    "ring",
    "alpha + n beta (each rank sends to its right neighbour)",
    "nccl-tests sendrecv_perf",
    coefficients=const(1, 1, 0),
    array_builder=sendrecv_arrays,
)
def sendrecv(p: int, segments: int = 1) -> Schedule:
    # one chunk per rank (its message), one buffer chunk: every rank sends to its right neighbour
    steps = [step(Transfer(r, (r + 1) % p, (r,), COPY) for r in range(p))] if p > 1 else []
    return make("sendrecv", "ring", p, p, steps, buffer_chunks=1)
