"""Symbolic execution of a schedule: proof that it computes its collective.

Each (rank, chunk) holds the set of ranks whose contribution it contains (a bitmask; 0 = the chunk
is not there yet). A copy replaces the receiver's set with the sender's; a reduce unites them and
fails if they overlap (a contribution counted twice). Reading a chunk the sender does not hold,
two writes to one chunk in one step, or a wrong final state is an error naming step, rank, chunk.
The array form (schedule/arrays.py) is checked on its expansion to tuples (small p).
"""

from __future__ import annotations

from collperf.collectives import get_collective
from collperf.schedule.arrays import ArraySchedule, as_tuples
from collperf.schedule.ir import COPY, REDUCE, Schedule


class VerificationError(AssertionError):
    """A schedule that does not compute its collective; the message names the place."""


def _blocks_of_chunks(s: Schedule) -> list[int]:
    """The block of the whole buffer (collectives.py) each chunk lies in: the chunks split the whole
    buffer evenly into its blocks (an alltoall's p x p chunks are its p x p blocks)."""
    whole = get_collective(s.collective).blocks(s.ranks)
    return [i * whole // s.chunks for i in range(s.chunks)]


def initial_state(s: Schedule) -> list[list[int]]:
    """Each rank holds its own contribution in the chunks of the blocks its input holds."""
    coll, p = get_collective(s.collective), s.ranks
    blocks = _blocks_of_chunks(s)
    state = []
    for r in range(p):
        held = coll.input_blocks(r, p, s.root)
        state.append([1 << r if b in held else 0 for b in blocks])
    return state


def _postcondition(s: Schedule, rank: int, blocks: list[int], sources: list[int | None]) -> list[int | None]:
    """What each chunk of `rank` must hold at the end (None: it does not matter): for the blocks the
    rank's output holds, all ranks (a reduction) or the block's source rank."""
    wanted = get_collective(s.collective).output_blocks(rank, s.ranks, s.root)
    full = (1 << s.ranks) - 1
    return [(full if (source := sources[b]) is None else 1 << source) if b in wanted else None for b in blocks]


def expected(s: Schedule, rank: int, chunk: int) -> int | None:
    """The set (rank, chunk) must hold at the end, or None when it does not matter."""
    blocks = _blocks_of_chunks(s)
    return _postcondition(s, rank, blocks, get_collective(s.collective).sources(s.ranks, s.root))[chunk]


def _names(mask: int) -> str:
    return "{" + ",".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1) + "}"


def verify(s: Schedule | ArraySchedule, empty_chunks: frozenset[int] = frozenset()) -> None:
    """Raise VerificationError unless `s` computes its collective. `empty_chunks` (chunk ids with no
    elements for the size at hand) carry no data and are not checked."""
    s = as_tuples(s)
    p, c = s.ranks, s.chunks
    state = initial_state(s)
    for k, step in enumerate(s.steps):
        written: dict[tuple[int, int], str] = {}
        updates = []
        for t in step.transfers:
            where = f"step {k}, transfer {t!r}"
            if not (0 <= t.src < p and 0 <= t.dst < p):
                raise VerificationError(f"{where}: rank out of range 0..{p - 1}")
            if t.src == t.dst:
                raise VerificationError(f"{where}: rank {t.src} sends to itself")
            if t.op not in (COPY, REDUCE):
                raise VerificationError(f"{where}: unknown op {t.op!r}")
            for chunk in t.chunks:
                if not 0 <= chunk < c:
                    raise VerificationError(f"{where}: chunk {chunk} out of range 0..{c - 1}")
                if chunk in empty_chunks:
                    continue
                value = state[t.src][chunk]
                if value == 0:
                    raise VerificationError(f"{where}: rank {t.src} sends chunk {chunk}, which it does not hold yet")
                key = (t.dst, chunk)
                if key in written and (written[key] == COPY or t.op == COPY):
                    raise VerificationError(f"{where}: rank {t.dst} chunk {chunk} is written twice in one step")
                written[key] = t.op
                updates.append((t, chunk, value))
        for t, chunk, value in updates:
            old = state[t.dst][chunk]
            if t.op == COPY:
                state[t.dst][chunk] = value
            else:
                if old == 0:
                    raise VerificationError(
                        f"step {k}, transfer {t!r}: rank {t.dst} reduces into chunk {chunk}, which it does not hold yet"
                    )
                if old & value:
                    raise VerificationError(
                        f"step {k}, transfer {t!r}: rank {t.dst} chunk {chunk} would count "
                        f"contributions {_names(old & value)} twice"
                    )
                state[t.dst][chunk] = old | value
    blocks, sources = _blocks_of_chunks(s), get_collective(s.collective).sources(p, s.root)
    for r in range(p):
        wanted = _postcondition(s, r, blocks, sources)
        for chunk in range(c):
            if chunk in empty_chunks:
                continue
            want = wanted[chunk]
            if want is not None and state[r][chunk] != want:
                raise VerificationError(
                    f"after the last step ({len(s.steps)} steps), rank {r} chunk {chunk} holds "
                    f"{_names(state[r][chunk])}, expected {_names(want)}"
                )


def empty_chunks_for(s: Schedule, elements: int) -> frozenset[int]:
    """Chunk ids that have no elements when `elements` are split into the schedule's buffer chunks
    (array_split: the first elements % c pieces get one more)."""
    per_buffer = s.chunks_per_buffer
    sizes = [elements // per_buffer + (1 if i < elements % per_buffer else 0) for i in range(per_buffer)]
    return frozenset(i for i in range(s.chunks) if sizes[i % per_buffer] == 0)
