"""The schedule IR: an algorithm as explicit steps of transfers between ranks.

A schedule runs on `ranks` ranks over `chunks` chunk ids. Each step holds transfers
(src, dst, chunks, op): `op` is "copy" (dst's chunk becomes src's) or "reduce" (src's chunk is
reduced into dst's). All transfers of a step may run at once: every transfer reads the state its
source had when the step began. A rank starts step k+1 when its own transfers of step k are done.

Chunk sizes: `buffer_chunks` chunks make up the formula's n bytes (numpy.array_split / tensor_split
semantics on elements: exactly that many pieces, some possibly empty). For every collective but
alltoall and sendrecv, chunks == buffer_chunks. An alltoall has ranks x ranks chunks, chunk
s * ranks + d being the block rank s sends to rank d (n / ranks bytes each); a sendrecv has one
chunk per rank, chunk s being rank s's message.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, NamedTuple, Sequence

COPY, REDUCE = "copy", "reduce"


class Transfer(NamedTuple):
    """A named tuple: schedules of big clusters hold millions of these."""

    src: int
    dst: int
    chunks: Sequence[int]  # a tuple, or a range for contiguous chunks (compact for big schedules)
    op: str = COPY

    def __repr__(self) -> str:
        arrow = "+>" if self.op == REDUCE else "->"
        return f"{self.src}{arrow}{self.dst}{list(self.chunks)}"


class Step(NamedTuple):
    transfers: tuple[Transfer, ...]

    def __repr__(self) -> str:
        return "Step(" + ", ".join(map(repr, self.transfers)) + ")"


@dataclass(frozen=True)
class Schedule:
    collective: str
    algorithm: str
    ranks: int
    chunks: int
    steps: tuple[Step, ...]
    root: int = 0
    buffer_chunks: int = 0  # chunks that make up n; 0 means `chunks`
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def chunks_per_buffer(self) -> int:
        return self.buffer_chunks or self.chunks

    @property
    def transfers(self) -> Iterator[tuple[int, Transfer]]:
        for index, step in enumerate(self.steps):
            for t in step.transfers:
                yield index, t

    def __repr__(self) -> str:
        return (
            f"Schedule({self.collective} {self.algorithm}, ranks={self.ranks}, chunks={self.chunks}, "
            f"steps={len(self.steps)}, transfers={sum(len(s.transfers) for s in self.steps)})"
        )

    def render(self, max_steps: int | None = None) -> str:
        """Who sends which chunks to whom at each step; '->' copies, '+>' reduces into the receiver."""
        lines = [repr(self)]
        for index, step in enumerate(self.steps):
            if max_steps is not None and index >= max_steps:
                lines.append(f"... {len(self.steps) - max_steps} more steps")
                break
            lines.append(f"step {index:>3}: " + "  ".join(_short(t) for t in step.transfers))
        return "\n".join(lines)


def _short(t: Transfer) -> str:
    arrow = "+>" if t.op == REDUCE else "->"
    return f"{t.src}{arrow}{t.dst}:{_ranges(t.chunks)}"


def _ranges(chunks: Iterable[int]) -> str:
    """[0,1,2,5] -> '0-2,5'."""
    parts: list[str] = []
    values = sorted(chunks)
    i = 0
    while i < len(values):
        j = i
        while j + 1 < len(values) and values[j + 1] == values[j] + 1:
            j += 1
        parts.append(str(values[i]) if i == j else f"{values[i]}-{values[j]}")
        i = j + 1
    return ",".join(parts) or "-"


# --- building blocks ----------------------------------------------------------------------------


def step(transfers: Iterable[Transfer]) -> Step:
    return Step(tuple(t for t in transfers if t.chunks))


def make(
    collective: str,
    algorithm: str,
    ranks: int,
    chunks: int,
    steps: Iterable[Step],
    root: int = 0,
    buffer_chunks: int = 0,
    **meta: Any,
) -> Schedule:
    kept = tuple(s for s in steps if s.transfers)
    return Schedule(collective, algorithm, ranks, chunks, kept, root, buffer_chunks, dict(meta))


def reverse(schedule: Schedule, collective: str, algorithm: str, reduce: bool) -> Schedule:
    """The time reversal: steps in reverse order, each transfer backwards; copies become reduces
    when `reduce` (broadcast -> reduce, allgather -> reduce-scatter), stay copies otherwise
    (scatter -> gather)."""
    op = REDUCE if reduce else COPY
    steps = tuple(
        Step(tuple(Transfer(t.dst, t.src, t.chunks, op) for t in s.transfers)) for s in reversed(schedule.steps)
    )
    return replace(schedule, collective=collective, algorithm=algorithm, steps=steps)


def concat(first: Schedule, second: Schedule, collective: str, algorithm: str) -> Schedule:
    """`first` then `second` on the same ranks and chunks."""
    if (first.ranks, first.chunks) != (second.ranks, second.chunks):
        raise ValueError(
            f"cannot concatenate schedules on {first.ranks}x{first.chunks} and "
            f"{second.ranks}x{second.chunks} ranks x chunks"
        )
    return replace(first, collective=collective, algorithm=algorithm, steps=first.steps + second.steps)


def relabel(schedule: Schedule, root: int) -> Schedule:
    """Rotate rank numbers so that rank 0's role is played by `root` (rooted collectives).
    Block-indexed chunks (scatter, gather) are rotated with their owners."""
    p = schedule.ranks
    if root == 0 or p == 1:
        return replace(schedule, root=root)
    rotate_chunks = schedule.collective in ("scatter", "gather") and schedule.chunks == p

    def chunk(c: int) -> int:
        return (c + root) % p if rotate_chunks else c

    steps = tuple(
        Step(
            tuple(
                Transfer((t.src + root) % p, (t.dst + root) % p, tuple(chunk(c) for c in t.chunks), t.op)
                for t in s.transfers
            )
        )
        for s in schedule.steps
    )
    return replace(schedule, steps=steps, root=root)


def parallel(
    schedules: Sequence[Schedule],
    ranks: int,
    chunks: int,
    collective: str,
    algorithm: str,
    buffer_chunks: int = 0,
    root: int = 0,
) -> Schedule:
    """Run already-embedded schedules side by side: step k of each becomes one step k."""
    depth = max((len(s.steps) for s in schedules), default=0)
    steps = []
    for k in range(depth):
        steps.append(Step(tuple(t for s in schedules if k < len(s.steps) for t in s.steps[k].transfers)))
    return make(collective, algorithm, ranks, chunks, steps, root, buffer_chunks)


def embed(
    schedule: Schedule, rank_map: Sequence[int], chunk_map: Sequence[Sequence[int]], ranks: int, chunks: int
) -> Schedule:
    """A sub-group's schedule in global terms: its rank i is rank_map[i], its chunk j the global
    chunks chunk_map[j] (a list)."""
    steps = tuple(
        Step(
            tuple(
                Transfer(rank_map[t.src], rank_map[t.dst], tuple(g for c in t.chunks for g in chunk_map[c]), t.op)
                for t in s.transfers
            )
        )
        for s in schedule.steps
    )
    return replace(schedule, ranks=ranks, chunks=chunks, steps=steps)


def coalesce(step: Step) -> Step:
    """The step with its transfers between the same two ranks and of the same kind (copy or reduce) made
    one: their chunks, in the order of the transfers, travel as one message (packed into one buffer when
    they are not contiguous, unpacked on receipt), where the schedule lists one transfer per tree. Blink's
    packed trees share edges: 4 trees from one root send 2 to 4 transfers down the same edge in a step,
    and each message costs a fixed amount whatever its size (gloo: runtime/execute.py PER_MESSAGE_S). The
    merged transfer takes the place of the first of its group; the step means the same (every transfer reads what its source held
    when the step began, and reductions into a chunk commute)."""
    groups: dict[tuple[int, int, str], list[Transfer]] = {}
    for t in step.transfers:
        groups.setdefault((t.src, t.dst, t.op), []).append(t)
    if len(groups) == len(step.transfers):
        return step
    return Step(
        tuple(
            ts[0] if len(ts) == 1 else Transfer(ts[0].src, ts[0].dst, tuple(c for t in ts for c in t.chunks), ts[0].op)
            for ts in groups.values()
        )
    )
