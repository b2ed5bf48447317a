"""The collective of an nccl-tests table that does not name its test, read from what the table says: the ops and
roots its rows print, size / (count x type size) per row, and busbw / algbw; where those leave two collectives that
the table cannot tell apart, no guess: the table keeps no collective and names the flag that settles it.

nccl-tests' conventions (nccl-tests 2.19 src/*.cu, and doc/PERFORMANCE.md for the bus bandwidth): all_reduce, broadcast, reduce
and sendrecv print size = count x type size; all_gather, reduce_scatter, alltoall, gather and scatter size = count x
type size x nranks (count per rank or per peer). busbw/algbw is 2(n-1)/n for all_reduce, (n-1)/n for all_gather,
reduce_scatter, alltoall, gather and scatter, 1 for broadcast, reduce and sendrecv. So a ratio of 1 with count x type
= size is sendrecv or a 2-rank all_reduce, and per-rank counts with no op are all_gather or alltoall alike (same size
convention, same factor) unless the legacy redop column tells (alltoall printed an empty one)."""

from __future__ import annotations

from collperf.ingest.consistency import count_multiple
from collperf.ingest.table import Table


def undecided(t: Table, candidates: tuple[str, ...], why: str) -> str:
    """Record that the table cannot settle its collective: no collective, and the flag that settles it."""
    flags = " or ".join(f"--collective {c}" for c in candidates)
    t.header["collective_undecided"] = (
        f"{t.source}: the log does not name its test and the table cannot tell "
        f"{' from '.join(candidates)} ({why}): give {flags} (the nccl-tests binary "
        "that printed it)"
    )
    t.header["collective_candidates"] = list(candidates)
    return ""


def guess(t: Table, ratio: float) -> str:
    """The collective, or '' where the table cannot settle it (undecided says why and which flag)."""
    ops = {r.op for r in t.rows if r.op and r.op != "none"}
    roots = {r.root for r in t.rows if r.root is not None}
    k = count_multiple(t)
    if ops:
        if roots and roots != {-1}:
            return "reduce"
        if k is not None and k > 1:
            return "reducescatter"
        if abs(ratio - 1) < 0.02:
            if t.ranks and t.ranks != 2:
                return "sendrecv"  # all_reduce's 2(n-1)/n is 1 only on 2 ranks
            return undecided(
                t,
                ("allreduce", "sendrecv"),
                f"busbw/algbw = {ratio:.4f}: a 2-rank all_reduce and a sendrecv both print 1",
            )
        return (
            "allreduce"
            if ratio > 1 or (t.ranks and abs(ratio - 2 * (t.ranks - 1) / t.ranks) < 0.02)
            else "reducescatter"
        )
    if roots and roots != {-1}:
        return "broadcast"
    # legacy alltoall: the header names a redop column that its rows leave empty (allgather has none)
    columns = t.header.get("columns", [])
    if "redop" in columns and not roots:
        return "alltoall"
    if columns and "redop" not in columns:
        return "allgather"  # legacy all_gather printed `size count type` alone (no redop, no root column)
    if k == 1 or (k is None and abs(ratio - 1) < 0.02):
        return "sendrecv"  # no op, no root, count x type = size, busbw = algbw
    return undecided(
        t, ("allgather", "alltoall"), "both print size = count x type size x ranks and busbw = algbw x (n-1)/n"
    )
