"""Symbolic execution of a schedule: proof that it computes its collective.

Each (rank, chunk) holds the set of ranks whose contribution it contains (a bitmask; 0 = the chunk
is not there yet). A copy replaces the receiver's set with the sender's; a reduce unites them and
fails if they overlap (a contribution counted twice). Reading a chunk the sender does not hold,
two writes to one chunk in one step, or a wrong final state is an error naming step, rank, chunk.
The array form (schedule/arrays.py) is checked on its expansion to tuples (small p).
"""

from __future__ import annotations

from collperf.schedule.arrays import as_tuples
from collperf.schedule.ir import COPY, REDUCE, Schedule


class VerificationError(AssertionError):
    """A schedule that does not compute its collective; the message names the place."""


def block_owner(schedule: Schedule, chunk: int) -> int:
    """The rank whose block a chunk belongs to (allgather, reducescatter, scatter, gather)."""
    return chunk * schedule.ranks // schedule.chunks


def initial_state(s: Schedule) -> list[list[int]]:
    p, c = s.ranks, s.chunks
    state = [[0] * c for _ in range(p)]
    for r in range(p):
        for i in range(c):
            if s.collective in ("allreduce", "reduce", "reducescatter"):
                state[r][i] = 1 << r
            elif s.collective in ("allgather", "gather"):
                state[r][i] = 1 << r if block_owner(s, i) == r else 0
            elif s.collective in ("broadcast", "scatter"):
                state[r][i] = 1 << r if r == s.root else 0
            elif s.collective == "alltoall":
                state[r][i] = 1 << r if i // p == r else 0
            elif s.collective == "sendrecv":
                state[r][i] = 1 << r if i == r else 0
    return state


def expected(s: Schedule, rank: int, chunk: int) -> int | None:
    """The set (rank, chunk) must hold at the end, or None when it does not matter."""
    p, full = s.ranks, (1 << s.ranks) - 1
    name = s.collective
    if name == "allreduce":
        return full
    if name == "broadcast":
        return 1 << s.root
    if name == "reduce":
        return full if rank == s.root else None
    if name == "allgather":
        return 1 << block_owner(s, chunk)
    if name == "reducescatter":
        return full if block_owner(s, chunk) == rank else None
    if name == "scatter":
        return 1 << s.root if block_owner(s, chunk) == rank else None
    if name == "gather":
        return 1 << block_owner(s, chunk) if rank == s.root else None
    if name == "alltoall":
        return 1 << (chunk // p) if chunk % p == rank else None
    if name == "sendrecv":
        return 1 << ((rank - 1) % p) if chunk == (rank - 1) % p else None
    raise VerificationError(f"no postcondition for collective {name!r}")


def _names(mask: int) -> str:
    return "{" + ",".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1) + "}"


def verify(s: Schedule, empty_chunks=frozenset()) -> None:
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
                    raise VerificationError(f"step {k}, transfer {t!r}: rank {t.dst} reduces into chunk {chunk}, "
                                            "which it does not hold yet")
                if old & value:
                    raise VerificationError(f"step {k}, transfer {t!r}: rank {t.dst} chunk {chunk} would count "
                                            f"contributions {_names(old & value)} twice")
                state[t.dst][chunk] = old | value
    for r in range(p):
        for chunk in range(c):
            if chunk in empty_chunks:
                continue
            want = expected(s, r, chunk)
            if want is not None and state[r][chunk] != want:
                raise VerificationError(f"after the last step ({len(s.steps)} steps), rank {r} chunk {chunk} holds "
                                        f"{_names(state[r][chunk])}, expected {_names(want)}")


def empty_chunks_for(s: Schedule, elements: int) -> frozenset:
    """Chunk ids that have no elements when `elements` are split into the schedule's buffer chunks
    (array_split: the first elements % c pieces get one more)."""
    per_buffer = s.chunks_per_buffer
    sizes = [elements // per_buffer + (1 if i < elements % per_buffer else 0) for i in range(per_buffer)]
    return frozenset(i for i in range(s.chunks) if sizes[i % per_buffer] == 0)
