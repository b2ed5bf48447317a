"""The collectives: what each one computes, its nccl-tests size convention, buffers and bus bandwidth.

`size` is always the nccl-tests `size` column (nccl-tests src/*.cu, doc/PERFORMANCE.md): the whole
buffer as nccl-tests defines it per collective. `Collective.formula_bytes` is the one place that maps it
to the n of the cost formulas (MPICH/Thakur/Chan convention: Thakur et al., IJHPCA 2005; Chan et al., CCPE 2007).

Buffers are described once, as blocks of the whole buffer (the one the `size` column measures, and the
one a schedule's chunks split; schedule/ir.py): a collective splits it into `blocks(p)` blocks, each
rank's input holds some of them in order (`input_blocks`), and its output must hold some of them in order
at the end (`output_blocks`). A block ends as the reduction over all ranks (reducing collectives) or as
the one contribution of the rank whose input holds it (`sources`). Every per-collective layout in the
project (the runtime's buffers and expected outputs, the verifier's initial state and postcondition)
is read from these three, so "rank s's input block d lands in block s of rank d's output" (alltoall) is
written here and nowhere else. Element counts follow nccl-tests' allocation (src/common.cu and each
test's GetCollByteCount): every rank gets the buffers the root needs, `count` elements per block.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt

from collperf.errors import UsageError, did_you_mean

# How many blocks the whole buffer has, for p ranks.
_BLOCKS: dict[str, Callable[[int], int]] = {"1": lambda p: 1, "p": lambda p: p, "p*p": lambda p: p * p}

# Which blocks of the whole buffer (`whole` of them) a rank holds: (rank, p, root, whole) -> range.
_HOLDS: dict[str, Callable[[int, int, int, int], range]] = {
    "every": lambda r, p, root, whole: range(whole),  # every rank, every block
    "root": lambda r, p, root, whole: range(whole) if r == root else range(0),  # the root, every block
    "own": lambda r, p, root, whole: range(r, r + 1),  # block r
    "left": lambda r, p, root, whole: range((r - 1) % p, (r - 1) % p + 1),  # block r-1: the left neighbour's
    "row": lambda r, p, root, whole: range(r * p, r * p + p),  # blocks r*p + d, d = 0..p-1
    "column": lambda r, p, root, whole: range(r, whole, p),  # blocks s*p + r, s = 0..p-1
}


@dataclass(frozen=True)
class Collective:
    name: str
    nccl_tests_binary: str  # the nccl-tests program that measures it (all_reduce_perf, ...)
    reduces: bool  # does it apply a reduction operator
    rooted: bool  # does it have a root rank
    busbw_scale: float | None  # busbw factor = busbw_scale x (p-1)/p; None: the factor is 1
    whole: str  # blocks of the whole buffer: "1", "p" or "p*p" (p ranks)
    before: str  # which blocks a rank's input holds (a key of _HOLDS)
    after: str  # which blocks a rank's output must hold at the end (a key of _HOLDS)
    in_place: bool = True  # an in-place run exists (the smaller buffer is block `rank` of the larger)
    size_means: str = ""  # what nccl-tests' size column measures for it, in words (a user checks a size by it)

    def __post_init__(self) -> None:
        if self.whole not in _BLOCKS or self.before not in _HOLDS or self.after not in _HOLDS:
            raise ValueError(f"{self.name}: unknown layout {self.whole!r}, {self.before!r}, {self.after!r}")

    # --- bandwidth (nccl-tests doc/PERFORMANCE.md; src/*.cu GetBw) -------------------------------------

    def busbw_factor(self, ranks: int) -> float:
        """nccl-tests' busbw = algbw x factor: 2(p-1)/p for allreduce; (p-1)/p where each rank's link
        carries all but its own share; 1 for broadcast, reduce, sendrecv (the root's link, or the one
        link, carries all of it)."""
        p = check_ranks(ranks)
        return self.busbw_scale * (p - 1) / p if self.busbw_scale is not None else 1.0

    def ranks_for_busbw_factor(self, factor: float) -> float | None:
        """The (real-valued) rank count whose busbw factor is `factor`; None where the factor does not
        depend on it. Raises ZeroDivisionError at factor == busbw_scale (infinitely many ranks)."""
        if self.busbw_scale is None:
            return None
        return self.busbw_scale / (self.busbw_scale - factor)  # solves scale x (p-1)/p = factor

    def algbw(self, size_bytes: npt.ArrayLike, time_s: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Algorithm bandwidth in bytes/s: size / time (nccl-tests); the same for every collective."""
        return algbw(size_bytes, time_s)

    def busbw(self, size_bytes: npt.ArrayLike, ranks: int, time_s: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """Bus bandwidth in bytes/s: algbw x the busbw factor (nccl-tests)."""
        return self.algbw(size_bytes, time_s) * self.busbw_factor(ranks)

    def bandwidths_GBps(self, size_bytes: float, ranks: int, time_s: float) -> tuple[float, float]:
        """(algbw, busbw) in GB/s (1e9 bytes/s), as nccl-tests prints them; time_s must be > 0."""
        algbw_GBps = float(self.algbw(size_bytes, time_s)) / 1e9
        return algbw_GBps, algbw_GBps * self.busbw_factor(ranks)

    def formula_bytes(self, size_bytes: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """n of the cost formulas for a nccl-tests size.

        The MPICH/Thakur/Chan n is the buffer each formula row is written in (allgather: total output;
        reducescatter: total input; alltoall: total a rank sends; scatter/gather: total at the root),
        which is exactly nccl-tests' `size` for every collective, so the map is the identity. It stays a
        function so that the convention is written down once and every caller goes through it.
        """
        return np.asarray(size_bytes, dtype=float)

    # --- buffers, before and after -----------------------------------------------------------------------

    def blocks(self, p: int) -> int:
        """How many blocks the whole buffer has for p ranks."""
        return _BLOCKS[self.whole](p)

    def input_blocks(self, rank: int, p: int, root: int = 0) -> range:
        """The blocks of the whole buffer that rank `rank`'s input holds, in buffer order (empty: none)."""
        return _HOLDS[self.before](rank, p, root, self.blocks(p))

    def output_blocks(self, rank: int, p: int, root: int = 0) -> range:
        """The blocks rank `rank`'s output must hold at the end, in buffer order (empty: not checked)."""
        return _HOLDS[self.after](rank, p, root, self.blocks(p))

    def sources(self, p: int, root: int = 0) -> list[int | None]:
        """For each block of the whole buffer, the rank whose contribution it ends with (the rank whose
        input holds it); None for every block of a reducing collective, which ends as all ranks' reduction."""
        found: list[int | None] = [None] * self.blocks(p)
        if not self.reduces:
            for r in range(p):
                for b in self.input_blocks(r, p, root):
                    found[b] = r
        return found

    def count_divisor(self, p: int) -> int:
        """size / count in elements: how many blocks of `count` elements the `size` column measures."""
        return max(self._input_count(p), self._output_count(p))

    def elements(self, count: int, p: int) -> tuple[int, int]:
        """(input, output) elements of every rank for nccl-tests' per-rank `count` column."""
        return count * self._input_count(p), count * self._output_count(p)

    def counts(self, size_bytes: int, p: int, element_bytes: int) -> tuple[int, int, int, int]:
        """nccl-tests' (count, size, input elements, output elements) for a requested size: the count
        is rounded down so that the buffer divides into whole blocks."""
        divisor = self.count_divisor(p)
        count = size_bytes // element_bytes // divisor
        return (count, count * divisor * element_bytes, *self.elements(count, p))

    def buffer_elements(self, in_elements: int, p: int) -> int:
        """Elements of the whole buffer, given those of one rank's input."""
        return in_elements * self.count_divisor(p) // self._input_count(p)

    def _input_count(self, p: int) -> int:
        # nccl-tests allocates every rank the root's buffers: blocks held by rank 0 as the root
        return len(self.input_blocks(0, p, 0))

    def _output_count(self, p: int) -> int:
        return len(self.output_blocks(0, p, 0))


COLLECTIVES: dict[str, Collective] = {
    c.name: c
    for c in (
        Collective(
            "allreduce",
            "all_reduce_perf",
            reduces=True,
            rooted=False,
            busbw_scale=2.0,
            whole="1",
            before="every",
            after="every",
            size_means="the vector every rank holds, not the total over ranks",
        ),
        Collective(
            "allgather",
            "all_gather_perf",
            reduces=False,
            rooted=False,
            busbw_scale=1.0,
            whole="p",
            before="own",
            after="every",
            size_means="the whole output: ranks x each rank's contribution",
        ),
        Collective(
            "reducescatter",
            "reduce_scatter_perf",
            reduces=True,
            rooted=False,
            busbw_scale=1.0,
            whole="p",
            before="every",
            after="own",
            size_means="the whole input: ranks x each rank's output",
        ),
        Collective(
            "broadcast",
            "broadcast_perf",
            reduces=False,
            rooted=True,
            busbw_scale=None,
            whole="1",
            before="root",
            after="every",
            size_means="the vector broadcast from the root",
        ),
        Collective(
            "reduce",
            "reduce_perf",
            reduces=True,
            rooted=True,
            busbw_scale=None,
            whole="1",
            before="every",
            after="root",
            size_means="the vector every rank contributes, not the total over ranks",
        ),
        # block s*p + d: what rank s sends to rank d
        Collective(
            "alltoall",
            "alltoall_perf",
            reduces=False,
            rooted=False,
            busbw_scale=1.0,
            whole="p*p",
            before="row",
            after="column",
            in_place=False,
            size_means="all data one rank sends (ranks blocks, its own included)",
        ),
        Collective(
            "scatter",
            "scatter_perf",
            reduces=False,
            rooted=True,
            busbw_scale=1.0,
            whole="p",
            before="root",
            after="own",
            size_means="all data at the root (ranks blocks)",
        ),
        Collective(
            "gather",
            "gather_perf",
            reduces=False,
            rooted=True,
            busbw_scale=1.0,
            whole="p",
            before="own",
            after="root",
            size_means="all data gathered at the root (ranks blocks)",
        ),
        # block s: rank s's message, which rank s + 1 receives
        Collective(
            "sendrecv",
            "sendrecv_perf",
            reduces=False,
            rooted=False,
            busbw_scale=None,
            whole="p",
            before="own",
            after="left",
            in_place=False,
            size_means="the message each rank sends to its neighbour",
        ),
    )
}

# nccl-tests program name -> collective (what lab/results.py writes and the ingest reads)
PROGRAMS: dict[str, Collective] = {c.nccl_tests_binary: c for c in COLLECTIVES.values()}

_ALIASES = {"p2p": "sendrecv", "bcast": "broadcast", "a2a": "alltoall"}


def get_collective(name: str | Collective) -> Collective:
    """The collective by name or alias (any case, `_` and `-` ignored); a Collective is returned as is."""
    if isinstance(name, Collective):
        return name
    key = str(name).strip().lower().replace("_", "").replace("-", "")
    key = _ALIASES.get(key, key)
    if key not in COLLECTIVES:
        hint = did_you_mean(name, COLLECTIVES, {**_ALIASES, **{p: c.name for p, c in PROGRAMS.items()}})
        raise UsageError(f"unknown collective {name!r}: {hint}expected one of {', '.join(COLLECTIVES)}")
    return COLLECTIVES[key]


# --- thin wrappers, by name (kept for callers that hold a name) ----------------------------------------


def busbw_factor(collective: str | Collective, ranks: int) -> float:
    """nccl-tests' busbw = algbw x factor (doc/PERFORMANCE.md; src/*.cu GetBw)."""
    return get_collective(collective).busbw_factor(ranks)


def formula_bytes(collective: str | Collective, size_bytes: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """n of the cost formulas for a nccl-tests size (see Collective.formula_bytes)."""
    return get_collective(collective).formula_bytes(size_bytes)


def algbw(size_bytes: npt.ArrayLike, time_s: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Algorithm bandwidth in bytes/s: size / time (nccl-tests); the same for every collective."""
    return np.asarray(size_bytes, dtype=np.float64) / np.asarray(time_s, dtype=np.float64)


def busbw(
    collective: str | Collective, ranks: int, size_bytes: npt.ArrayLike, time_s: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    """Bus bandwidth in bytes/s: algbw x the collective's factor (nccl-tests)."""
    return get_collective(collective).busbw(size_bytes, ranks, time_s)


def check_ranks(ranks: object) -> int:
    if isinstance(ranks, bool) or not isinstance(ranks, (int, np.integer)) or ranks < 1:
        raise UsageError(f"ranks {ranks!r} is not a positive whole number: expected ranks >= 1, e.g. --ranks 8")
    return int(ranks)
