"""Ring (bucket) algorithms: each rank talks only to its neighbours (Chan et al. 2007; NCCL ring)."""

from __future__ import annotations

from collperf.model.algorithms.base import CHAN, MPICH, algorithm, arrays_of, const, q
from collperf.model.algorithms import vectorized
from collperf.schedule.ir import COPY, REDUCE, Transfer, concat, make, step


@algorithm("allgather", "ring", "(p-1) alpha + (p-1)/p n beta", MPICH + "allgather_intra_ring.c; " + CHAN,
           coefficients=const(lambda p: p - 1, q, 0),
           array_builder=arrays_of(vectorized.ring_allgather))
def allgather(p: int, segments: int = 1):
    # step s: rank r forwards block (r - s) to r + 1
    steps = [step(Transfer(r, (r + 1) % p, ((r - s) % p,), COPY) for r in range(p)) for s in range(p - 1)]
    return make("allgather", "ring", p, p, steps)


@algorithm("reducescatter", "ring", "(p-1) alpha + (p-1)/p n beta + (p-1)/p n gamma", CHAN + " (bucket); NCCL ring",
           coefficients=const(lambda p: p - 1, q, q),
           array_builder=arrays_of(vectorized.ring_reducescatter))
def reducescatter(p: int, segments: int = 1):
    # step s: rank r reduces block (r - s - 1) into r + 1; block b starts at b + 1 and, summing
    # as it goes round, arrives complete at its owner b after p - 1 steps
    steps = [step(Transfer(r, (r + 1) % p, ((r - s - 1) % p,), REDUCE) for r in range(p)) for s in range(p - 1)]
    return make("reducescatter", "ring", p, p, steps)


@algorithm("allreduce", "ring", "2(p-1) alpha + 2 (p-1)/p n beta + (p-1)/p n gamma",
           CHAN + "; Patarasuk & Yuan 2009; NCCL ring",
           coefficients=const(lambda p: 2 * (p - 1), lambda p: 2 * q(p), q),
           array_builder=arrays_of(vectorized.ring_allreduce))
def allreduce(p: int, segments: int = 1):
    return concat(reducescatter(p), allgather(p), "allreduce", "ring")


@algorithm("sendrecv", "ring", "alpha + n beta (each rank sends to its right neighbour)", "nccl-tests sendrecv_perf",
           coefficients=const(1, 1, 0),
           array_builder=arrays_of(vectorized.ring_sendrecv))
def sendrecv(p: int, segments: int = 1):
    # one chunk per rank (its message), one buffer chunk: every rank sends to its right neighbour
    steps = [step(Transfer(r, (r + 1) % p, (r,), COPY) for r in range(p))] if p > 1 else []
    return make("sendrecv", "ring", p, p, steps, buffer_chunks=1)
