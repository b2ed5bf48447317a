"""The cost of a schedule on a uniform, full-duplex, contention-free network.

The same step model as the closed forms (model/algorithms/base.py): a step costs one alpha, the busiest
rank's max(bytes sent, bytes received) x beta and the most bytes any rank reduces x gamma. Chunk
sizes are fluid (n / buffer chunks each), so the result is exact for every size and must equal the
closed form; tests hold the two to that. Both schedule forms are accepted; the array form
(schedule/arrays.py) is priced once per run of like steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from collperf.model.costs import Cost
from collperf.model.network import Link
from collperf.schedule.arrays import ArraySchedule, ArrayStep
from collperf.schedule.ir import REDUCE, Schedule


@dataclass(frozen=True)
class StepLoad:
    """Per step, in chunks: the busiest port (max of sent and received) and the most reduced."""

    port_chunks: int
    reduce_chunks: int
    messages: int


def _array_step_load(st: ArrayStep, ranks: int) -> StepLoad:
    src, dst, count, red = st.transfers()
    sent = np.bincount(src, weights=count, minlength=ranks)
    received = np.bincount(dst, weights=count, minlength=ranks)
    reduced = np.bincount(dst[red], weights=count[red], minlength=ranks)
    return StepLoad(int(max(sent.max(), received.max())), int(reduced.max()), len(src))


def _runs(s: Schedule | ArraySchedule) -> list[tuple[StepLoad, int]]:
    """(load of one step, how many steps in a row have it)."""
    if isinstance(s, ArraySchedule):
        return [(_array_step_load(st, s.ranks), st.repeat) for st in s.steps]
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
        loads.append((StepLoad(int(max(sent.max(), received.max())), int(reduced.max()), len(step.transfers)), 1))
    return loads


def step_loads(s: Schedule | ArraySchedule) -> list[StepLoad]:
    return [load for load, repeat in _runs(s) for _ in range(repeat)]


def coefficients(s: Schedule | ArraySchedule) -> tuple[float, float, float]:
    """(a, b, c) of T = a alpha + b n beta + c n gamma for this schedule."""
    runs = _runs(s)
    per_chunk = 1.0 / s.chunks_per_buffer
    return (
        float(sum(repeat for _, repeat in runs)),
        sum(x.port_chunks * r for x, r in runs) * per_chunk,
        sum(x.reduce_chunks * r for x, r in runs) * per_chunk,
    )


def schedule_cost(s: Schedule | ArraySchedule, size_bytes: npt.ArrayLike, link: Link) -> Cost:
    a, b, c = coefficients(s)
    n = np.atleast_1d(np.asarray(size_bytes, dtype=float))
    return Cost(
        np.full(n.shape, a * link.latency_s), b * n * link.seconds_per_byte, c * n * link.seconds_per_reduced_byte
    )


def messages_per_rank(s: Schedule | ArraySchedule) -> dict[tuple[int, int], int]:
    """How many messages each (src, dst) pair carries over the whole schedule."""
    count: dict[tuple[int, int], int] = {}
    if isinstance(s, ArraySchedule):
        for st in s.steps:
            src, dst, _, _ = st.transfers()
            for a, b in zip(src.tolist(), dst.tolist()):
                count[(a, b)] = count.get((a, b), 0) + st.repeat
        return count
    for _, t in s.transfers:
        count[(t.src, t.dst)] = count.get((t.src, t.dst), 0) + 1
    return count
