"""Ring (bucket) algorithms: each rank talks only to its neighbours (Chan et al. 2007; NCCL ring)."""

from __future__ import annotations

from collperf.schedule.ir import COPY, REDUCE, Transfer, concat, make, step


def allgather(p: int):
    # step s: rank r forwards block (r - s) to r + 1
    steps = [step(Transfer(r, (r + 1) % p, ((r - s) % p,), COPY) for r in range(p)) for s in range(p - 1)]
    return make("allgather", "ring", p, p, steps)


def reducescatter(p: int):
    # step s: rank r reduces block (r - s - 1) into r + 1; block b starts at b + 1 and, summing
    # as it goes round, arrives complete at its owner b after p - 1 steps
    steps = [step(Transfer(r, (r + 1) % p, ((r - s - 1) % p,), REDUCE) for r in range(p)) for s in range(p - 1)]
    return make("reducescatter", "ring", p, p, steps)


def allreduce(p: int):
    return concat(reducescatter(p), allgather(p), "allreduce", "ring")


def sendrecv(p: int):
    # one chunk per rank (its message), one buffer chunk: every rank sends to its right neighbour
    steps = [step(Transfer(r, (r + 1) % p, (r,), COPY) for r in range(p))] if p > 1 else []
    return make("sendrecv", "ring", p, p, steps,
                buffer_chunks=1)

