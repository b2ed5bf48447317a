"""The collectives, the nccl-tests size convention and bus-bandwidth factors.

`size` is always the nccl-tests `size` column (nccl-tests src/*.cu, doc/PERFORMANCE.md): the whole
buffer as nccl-tests defines it per collective. `formula_bytes` is the one place that maps it to
the n of the cost formulas (MPICH/Thakur/Chan convention, reference/cost-formulas.md §1).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from collperf.errors import UsageError


@dataclass(frozen=True)
class Collective:
    name: str
    nccl_tests_binary: str
    size_meaning: str  # what the nccl-tests `size` column is for this collective
    reduces: bool      # does it apply a reduction operator
    rooted: bool       # does it have a root rank


COLLECTIVES: dict[str, Collective] = {c.name: c for c in (
    Collective("allreduce", "all_reduce_perf", "the vector every rank holds (input = output)", True, False),
    Collective("allgather", "all_gather_perf", "the whole output: ranks x per-rank contribution", False, False),
    Collective("reducescatter", "reduce_scatter_perf", "the whole input: ranks x per-rank output", True, False),
    Collective("broadcast", "broadcast_perf", "the vector broadcast from the root", False, True),
    Collective("reduce", "reduce_perf", "the vector every rank contributes", True, True),
    Collective("alltoall", "alltoall_perf", "all data one rank sends (ranks blocks, its own included)", False, False),
    Collective("scatter", "scatter_perf", "all data at the root (ranks blocks)", False, True),
    Collective("gather", "gather_perf", "all data gathered at the root (ranks blocks)", False, True),
    Collective("sendrecv", "sendrecv_perf", "the message each rank sends to its neighbour", False, False),
)}


def get_collective(name: str) -> Collective:
    key = str(name).strip().lower().replace("_", "").replace("-", "")
    aliases = {"sendrecv": "sendrecv", "p2p": "sendrecv", "bcast": "broadcast", "a2a": "alltoall"}
    key = aliases.get(key, key)
    if key not in COLLECTIVES:
        raise UsageError(f"unknown collective {name!r}: expected one of {', '.join(COLLECTIVES)}")
    return COLLECTIVES[key]


def busbw_factor(collective: str, ranks: int) -> float:
    """nccl-tests' busbw = algbw x factor (doc/PERFORMANCE.md; src/*.cu GetBw)."""
    name = get_collective(collective).name
    p = check_ranks(ranks)
    if name == "allreduce":
        return 2.0 * (p - 1) / p
    if name in ("allgather", "reducescatter", "alltoall", "gather", "scatter"):
        return (p - 1) / p
    return 1.0  # broadcast, reduce, sendrecv: the root link (or the one link) carries all of it


def formula_bytes(collective: str, size_bytes):
    """n of the cost formulas for a nccl-tests size.

    The MPICH/Thakur/Chan n is the buffer each formula row is written in (allgather: total output;
    reducescatter: total input; alltoall: total a rank sends; scatter/gather: total at the root),
    which is exactly nccl-tests' `size` for every collective, so the map is the identity. It stays a
    function so that the convention is written down once and every caller goes through it.
    """
    get_collective(collective)
    return np.asarray(size_bytes, dtype=float)


def algbw(size_bytes, time_s):
    """Algorithm bandwidth in bytes/s: size / time (nccl-tests)."""
    return np.asarray(size_bytes, dtype=float) / np.asarray(time_s, dtype=float)


def busbw(collective: str, ranks: int, size_bytes, time_s):
    """Bus bandwidth in bytes/s: algbw x the collective's factor (nccl-tests)."""
    return algbw(size_bytes, time_s) * busbw_factor(collective, ranks)


def check_ranks(ranks) -> int:
    if isinstance(ranks, bool) or not isinstance(ranks, (int, np.integer)) or ranks < 1:
        raise UsageError(f"ranks {ranks!r} is not a positive whole number: expected ranks >= 1, e.g. --ranks 8")
    return int(ranks)
