"""The array form of a schedule: a step (or a run of like steps) as numpy arrays, not Python tuples.

The tuple form (ir.py) holds one Python object per transfer: a flat ring allreduce on 4096 ranks is
33.5 M of them before anything is simulated. The array form holds a step as parallel arrays with
one row per chunk range:

    src, dst        ranks (int64)
    start, stop     the row's chunks are start .. stop - 1
    reduce          True: reduce into dst's chunks; False: copy
    transfer        row -> transfer number within the step (non-decreasing from 0; the rows of one
                    transfer are consecutive and share src, dst and op); None: one transfer per row

and a *run*: `repeat` occurrences in a row of the same transfers (same src, dst, chunk counts and
ops: the same bytes over the same routes), occurrence i moving the template's chunks shifted by
i * shift within blocks of `modulus` chunks (chunk x -> x - x % m + (x % m + i * shift) % m). A
ring's p - 1 reduce-scatter steps are one run of p transfers with shift -1. A run is a step class
declared by its builder: the simulator prices it once and counts it `repeat` times.

Conversion is lossless both ways: `ArraySchedule.to_schedule()` expands to the tuple form (small p:
the symbolic verifier and the runtime executor read that), `from_schedule` packs a tuple schedule
into arrays (any algorithm written as tuples reaches the array simulator that way).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable

import numpy as np
import numpy.typing as npt

from collperf.schedule.ir import COPY, REDUCE, Schedule, Step, Transfer


def _ints(x: npt.ArrayLike) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(x, dtype=np.int64).reshape(-1))


@dataclass(frozen=True, eq=False)
class ArrayStep:
    src: np.ndarray
    dst: np.ndarray
    start: np.ndarray
    stop: np.ndarray
    reduce: np.ndarray
    transfer: np.ndarray | None = None
    repeat: int = 1
    shift: int = 0
    modulus: int = 0

    def __post_init__(self) -> None:
        rows = len(_ints(self.src))
        for name in ("src", "dst", "start", "stop"):
            object.__setattr__(self, name, np.broadcast_to(_ints(getattr(self, name)), (rows,)).copy())
        object.__setattr__(
            self, "reduce", np.broadcast_to(np.asarray(self.reduce, dtype=bool).reshape(-1), (rows,)).copy()
        )
        if self.transfer is not None:
            object.__setattr__(self, "transfer", _ints(self.transfer))
        if self.repeat < 1:
            raise ValueError(f"a run repeats {self.repeat} times; expected >= 1")
        if self.shift and (
            self.modulus < 1 or np.any(self.start % self.modulus + self.stop - self.start > self.modulus)
        ):
            raise ValueError("a shifted run's chunk ranges must each lie inside one block of `modulus` chunks")

    @property
    def rows(self) -> int:
        return len(self.src)

    def first_rows(self) -> np.ndarray:
        """The first row of every transfer."""
        if self.transfer is None:
            return np.arange(self.rows)
        return np.flatnonzero(np.diff(self.transfer, prepend=-1))

    def transfers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per transfer (src, dst, chunk count, reduce): all that timing needs."""
        count = self.stop - self.start
        if self.transfer is None:
            return self.src, self.dst, count, self.reduce
        first = self.first_rows()
        return self.src[first], self.dst[first], np.add.reduceat(count, first), self.reduce[first]

    @property
    def transfer_count(self) -> int:
        return len(self.first_rows())

    def occurrence(self, i: int) -> ArrayStep:
        """Occurrence i of the run as a single step (rows that wrap round a block are split)."""
        if not self.shift or i == 0:
            return replace(self, repeat=1, shift=0, modulus=0)
        m = self.modulus
        base = self.start - self.start % m
        start = base + (self.start % m + i * self.shift) % m
        stop = start + (self.stop - self.start)
        wraps = stop > base + m
        if not wraps.any():
            return replace(self, start=start, stop=stop, repeat=1, shift=0, modulus=0)
        ids = self.transfer if self.transfer is not None else np.arange(self.rows)
        order = np.repeat(np.arange(self.rows), 1 + wraps)  # a wrapping row becomes two
        second = np.zeros(len(order), dtype=bool)
        second[np.flatnonzero(wraps) + np.arange(1, wraps.sum() + 1)] = True
        first_start = start[order]
        first_stop = np.where(wraps[order], (base + m)[order], stop[order])
        new_start = np.where(second, base[order], first_start)
        new_stop = np.where(second, (stop - m)[order], first_stop)
        return ArrayStep(self.src[order], self.dst[order], new_start, new_stop, self.reduce[order], ids[order])

    def swapped(self, reduce: bool) -> ArrayStep:
        """Every transfer backwards, as a copy or a reduce (the time reversal of one step)."""
        return replace(self, src=self.dst, dst=self.src, reduce=np.full(self.rows, reduce))

    def to_steps(self) -> list[Step]:
        """The tuple form of every occurrence (for small schedules)."""
        steps: list[Step] = []
        for i in range(self.repeat):
            s = self.occurrence(i)
            first = s.first_rows()
            ends = np.append(first[1:], s.rows)
            transfers = []
            for a, b in zip(first.tolist(), ends.tolist()):
                chunks = tuple(c for r in range(a, b) for c in range(int(s.start[r]), int(s.stop[r])))
                transfers.append(Transfer(int(s.src[a]), int(s.dst[a]), chunks, REDUCE if s.reduce[a] else COPY))
            steps.append(Step(tuple(transfers)))
        return steps


def array_step(
    src: npt.ArrayLike,
    dst: npt.ArrayLike,
    start: npt.ArrayLike,
    stop: npt.ArrayLike,
    reduce: npt.ArrayLike,
    transfer: npt.ArrayLike | None = None,
    repeat: int = 1,
    shift: int = 0,
    modulus: int = 0,
) -> ArrayStep | None:
    """A step without its empty rows (a transfer of no chunks is dropped, as ir.step does);
    None when nothing is left."""
    # as arrays already (ArrayStep's __post_init__ makes them so; the checker sees the fields' types)
    s = ArrayStep(
        _ints(src),
        _ints(dst),
        _ints(start),
        _ints(stop),
        np.asarray(reduce, dtype=bool),
        None if transfer is None else _ints(transfer),
        repeat,
        shift,
        modulus,
    )
    keep = s.stop > s.start
    if keep.all():
        return s if s.rows else None
    if not keep.any():
        return None
    t = None if s.transfer is None else np.unique(s.transfer[keep], return_inverse=True)[1]
    return ArrayStep(s.src[keep], s.dst[keep], s.start[keep], s.stop[keep], s.reduce[keep], t, repeat, shift, modulus)


@dataclass(frozen=True, eq=False)
class ArraySchedule:
    collective: str
    algorithm: str
    ranks: int
    chunks: int
    steps: tuple[ArrayStep, ...]
    root: int = 0
    buffer_chunks: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def chunks_per_buffer(self) -> int:
        return self.buffer_chunks or self.chunks

    @property
    def step_count(self) -> int:
        """Steps once every run is expanded."""
        return sum(s.repeat for s in self.steps)

    @property
    def transfer_count(self) -> int:
        return sum(s.repeat * s.transfer_count for s in self.steps)

    def __repr__(self) -> str:
        return (
            f"ArraySchedule({self.collective} {self.algorithm}, ranks={self.ranks}, chunks={self.chunks}, "
            f"steps={self.step_count} in {len(self.steps)} runs, transfers={self.transfer_count})"
        )

    def to_schedule(self) -> Schedule:
        """The tuple form, step for step and transfer for transfer."""
        steps = tuple(st for s in self.steps for st in s.to_steps())
        return Schedule(
            self.collective,
            self.algorithm,
            self.ranks,
            self.chunks,
            steps,
            self.root,
            self.buffer_chunks,
            dict(self.meta),
        )


def make_arrays(
    collective: str,
    algorithm: str,
    ranks: int,
    chunks: int,
    steps: Iterable[ArrayStep | None],
    root: int = 0,
    buffer_chunks: int = 0,
    **meta: Any,
) -> ArraySchedule:
    """As ir.make: steps that hold nothing (None) are dropped."""
    return ArraySchedule(
        collective, algorithm, ranks, chunks, tuple(s for s in steps if s is not None), root, buffer_chunks, dict(meta)
    )


def from_schedule(s: Schedule) -> ArraySchedule:
    """Pack a tuple schedule: one ArrayStep per step, one row per contiguous run of a transfer's chunks."""
    steps = []
    for st in s.steps:
        rows = []
        for index, t in enumerate(st.transfers):
            chunks = list(t.chunks)
            begin = 0
            for j in range(1, len(chunks) + 1):
                if j == len(chunks) or chunks[j] != chunks[j - 1] + 1:
                    rows.append((t.src, t.dst, chunks[begin], chunks[j - 1] + 1, t.op == REDUCE, index))
                    begin = j
        if rows:
            src, dst, start, stop, red, tid = (np.array(col) for col in zip(*rows))
            steps.append(ArrayStep(src, dst, start, stop, red, None if len(tid) == len(st.transfers) else tid))
    return ArraySchedule(
        s.collective, s.algorithm, s.ranks, s.chunks, tuple(steps), s.root, s.buffer_chunks, dict(s.meta)
    )


def as_arrays(s: Schedule | ArraySchedule) -> ArraySchedule:
    return s if isinstance(s, ArraySchedule) else from_schedule(s)


def as_tuples(s: Schedule | ArraySchedule) -> Schedule:
    return s if isinstance(s, Schedule) else s.to_schedule()


# --- combinators (the array twins of ir.concat, ir.reverse, ir.relabel, ir.embed + ir.parallel) --


def concat_arrays(first: ArraySchedule, second: ArraySchedule, collective: str, algorithm: str) -> ArraySchedule:
    if (first.ranks, first.chunks) != (second.ranks, second.chunks):
        raise ValueError(
            f"cannot concatenate schedules on {first.ranks}x{first.chunks} and "
            f"{second.ranks}x{second.chunks} ranks x chunks"
        )
    return replace(first, collective=collective, algorithm=algorithm, steps=first.steps + second.steps)


def reverse_arrays(s: ArraySchedule, collective: str, algorithm: str, reduce: bool) -> ArraySchedule:
    """Steps in reverse order, transfers backwards; a run is reversed by starting from its last
    occurrence and shifting the other way."""
    steps = []
    for st in reversed(s.steps):
        if st.shift and st.repeat > 1:
            last = st.occurrence(st.repeat - 1)
            steps.append(replace(last.swapped(reduce), repeat=st.repeat, shift=-st.shift, modulus=st.modulus))
        else:
            steps.append(st.swapped(reduce))
    return replace(s, collective=collective, algorithm=algorithm, steps=tuple(steps))


def relabel_arrays(s: ArraySchedule, root: int) -> ArraySchedule:
    """Rotate rank numbers so that rank 0's role is played by `root` (chunks are not rotated: callers
    with block-indexed rooted collectives use the tuple form)."""
    p = s.ranks
    if root == 0 or p == 1:
        return replace(s, root=root)
    steps = tuple(replace(st, src=(st.src + root) % p, dst=(st.dst + root) % p) for st in s.steps)
    return replace(s, steps=steps, root=root)


def embed_groups(sub: ArraySchedule, groups: np.ndarray, scale: int, offsets: np.ndarray) -> list[ArrayStep]:
    """`sub` run on every group at once (groups[i] maps sub rank j to a global rank): sub chunk j of
    group i is the global chunks scale * j + offsets[i] .. + scale - 1. Offsets must be multiples
    of scale * (each run's modulus), so that shifts stay inside their blocks. Transfers are ordered
    group by group, as ir.parallel orders them."""
    groups = np.asarray(groups, dtype=np.int64)
    offsets = np.asarray(offsets, dtype=np.int64)
    count = len(groups)
    out = []
    for st in sub.steps:
        n_t = st.transfer_count
        ids = st.transfer if st.transfer is not None else np.arange(st.rows)
        out.append(
            ArrayStep(
                groups[:, st.src].ravel(),
                groups[:, st.dst].ravel(),
                (scale * st.start[None, :] + offsets[:, None]).ravel(),
                (scale * st.stop[None, :] + offsets[:, None]).ravel(),
                np.tile(st.reduce, count),
                (ids[None, :] + n_t * np.arange(count)[:, None]).ravel() if st.transfer is not None else None,
                st.repeat,
                st.shift * scale,
                st.modulus * scale,
            )
        )
    return out
