"""Bruck et al. 1997: dissemination allgather and all-to-all in ceil(lg p) steps for any p.

Chunks keep their absolute numbers, so the local rotations of the paper are not needed.
"""

from __future__ import annotations

from collperf.model import trees as shapes
from collperf.schedule.ir import COPY, Transfer, make, step


def allgather(p: int):
    # at distance 2^k, rank r sends the blocks it holds, r .. r + cnt - 1, to r - 2^k
    steps, distance = [], 1
    while distance < p:
        count = min(distance, p - distance)
        steps.append(step(Transfer(r, (r - distance) % p, tuple((r + i) % p for i in range(count)), COPY)
                          for r in range(p)))
        distance *= 2
    return make("allgather", "bruck", p, p, steps)


def alltoall(p: int):
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


def broadcast_scatter_allgather(p: int):
    """van de Geijn: binomial scatter of p blocks, then a Bruck allgather of them."""
    from collperf.schedule.algorithms.trees import scatter_binomial
    scatter = scatter_binomial(p)
    return make("broadcast", "scatter-allgather", p, p, scatter.steps + allgather(p).steps)
