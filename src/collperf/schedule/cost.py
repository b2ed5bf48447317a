"""The cost of a schedule on a uniform, full-duplex, contention-free network.

The same step model as the closed forms (model/algorithms/base.py): a step costs one alpha, the busiest
rank's max(bytes sent, bytes received) x beta and the most bytes any rank reduces x gamma. Chunk
sizes are fluid (n / buffer chunks each), so the result is exact for every size and must equal the
closed form; tests hold the two to that.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collperf.model.costs import Cost
from collperf.model.network import Link
from collperf.schedule.ir import REDUCE, Schedule


@dataclass(frozen=True)
class StepLoad:
    """Per step, in chunks: the busiest port (max of sent and received) and the most reduced."""

    port_chunks: int
    reduce_chunks: int
    messages: int


def step_loads(s: Schedule) -> list[StepLoad]:
    loads = []
    for step in s.steps:
        sent = np.zeros(s.ranks, dtype=np.int64)
        received = np.zeros(s.ranks, dtype=np.int64)
        reduced = np.zeros(s.ranks, dtype=np.int64)
        for t in step.transfers:
            sent[t.src] += len(t.chunks)
            received[t.dst] += len(t.chunks)
            if t.op == REDUCE:
                reduced[t.dst] += len(t.chunks)
        loads.append(StepLoad(int(max(sent.max(), received.max())), int(reduced.max()), len(step.transfers)))
    return loads


def coefficients(s: Schedule) -> tuple[float, float, float]:
    """(a, b, c) of T = a alpha + b n beta + c n gamma for this schedule."""
    loads = step_loads(s)
    per_chunk = 1.0 / s.chunks_per_buffer
    return (float(len(loads)), sum(x.port_chunks for x in loads) * per_chunk,
            sum(x.reduce_chunks for x in loads) * per_chunk)


def schedule_cost(s: Schedule, size_bytes, link: Link) -> Cost:
    a, b, c = coefficients(s)
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    return Cost(np.full(n.shape, a * link.latency_s), b * n * link.seconds_per_byte,
                c * n * link.seconds_per_reduced_byte)


def messages_per_rank(s: Schedule) -> dict[tuple[int, int], int]:
    """How many messages each (src, dst) pair carries over the whole schedule."""
    count: dict[tuple[int, int], int] = {}
    for _, t in s.transfers:
        count[(t.src, t.dst)] = count.get((t.src, t.dst), 0) + 1
    return count
