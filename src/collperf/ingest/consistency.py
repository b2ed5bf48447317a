"""Do a table's columns agree with each other? busbw against algbw x the collective's factor, per row.

nccl-tests prints algbw = size / time and busbw = algbw x factor(collective, ranks) (reference/
nccl-tests-format.md section 6), each rounded to the printed digits. A row whose columns disagree
beyond that rounding is flagged (Row.flags); a collective the user gave that the ratio contradicts
is refused. The time-vs-algbw check is done where the printed tokens are known (the text reader).
"""

from __future__ import annotations

from collperf.collectives import busbw_factor
from collperf.ingest.table import IngestError, Row, Table


def resolution(value: float) -> float:
    """Half a unit in the last digit nccl-tests prints for a bandwidth (getFloatStr, width 6)."""
    if value < 1000:
        return 0.005
    if value < 10000:
        return 0.05
    if value < 1e6:
        return 0.5
    return 0.05 * value


def _checkable(t: Table, flagged: bool = False) -> list[Row]:
    return [r for r in t.rows if r.algbw_GBps is not None and r.busbw_GBps is not None and (flagged or not r.flags)]


def disagreeing(t: Table, factor: float, factor_err: float = 0.0) -> list[Row]:
    """Rows (not already flagged) whose busbw is not algbw x factor within the printed digits."""
    odd = []
    for r in _checkable(t):
        alg, bus = r.algbw_GBps, r.busbw_GBps
        tolerance = resolution(bus) + resolution(alg) * factor + alg * factor_err + 1e-3 * bus
        if abs(bus - alg * factor) > tolerance:
            odd.append(r)
    return odd


def ratio_of(t: Table, flagged: bool = False) -> tuple[float, float, Row] | None:
    """busbw / algbw from the row with the most printed digits (the largest algbw), its uncertainty, the row;
    from the rows not flagged unless `flagged`."""
    best = max(_checkable(t, flagged), key=lambda r: r.algbw_GBps, default=None)
    if best is None or best.algbw_GBps < 0.1:
        return None
    ratio = best.busbw_GBps / best.algbw_GBps
    return ratio, (resolution(best.busbw_GBps) + resolution(best.algbw_GBps) * ratio) / best.algbw_GBps, best


def _possible(collective: str, ratio: float) -> bool:
    """Can busbw/algbw be `ratio` for this collective on some rank count >= 2 (old conventions included)?"""
    if collective == "allreduce":
        return 0.99 <= ratio < 2.0
    if collective in ("allgather", "reducescatter"):
        return 0.49 <= ratio <= 1.01  # 1: the pre-2020 convention
    if collective in ("alltoall", "gather", "scatter"):
        return 0.49 <= ratio < 1.0
    return abs(ratio - 1) < 0.01  # broadcast, reduce, sendrecv


def _matching(ratio: float, ranks: int | None) -> list[str]:
    names = ("allreduce", "allgather", "alltoall", "broadcast")
    if ranks and ranks > 1:
        return [c for c in names if abs(busbw_factor(c, ranks) - ratio) < 0.01]
    return [c for c in names if _possible(c, ratio)]


def check_factor(t: Table) -> None:
    """Flag rows whose busbw/algbw is not the collective's factor; refuse a given collective it contradicts."""
    rows = _checkable(t)
    if (found := ratio_of(t)) is None:
        return
    ratio, _, big = found
    if t.ranks and t.ranks > 1:
        factor = busbw_factor(t.collective, t.ranks)
        expected = f"{t.collective} on {t.ranks} ranks: {factor:.4f}"
        odd = disagreeing(t, factor)
    else:
        odd = [] if _possible(t.collective, ratio) else rows
        expected = f"{t.collective}: {'1' if t.collective in ('broadcast', 'reduce', 'sendrecv') else 'a ratio'}" + (
            ""
            if t.collective in ("broadcast", "reduce", "sendrecv")
            else (" in [1, 2)" if t.collective == "allreduce" else " in [0.5, 1)")
        )
    if not odd:
        return
    if t.header.get("collective_from") == "given" and 2 * len(odd) > len(rows):
        others = [c for c in _matching(ratio, t.ranks) if c != t.collective]
        hint = f" (it matches {' or '.join(others)})" if others else ""
        raise IngestError(
            f"{t.source}: --collective {t.collective} does not fit this log: busbw/algbw = {ratio:.4f} "
            f"at {big.size} B (line {big.line}){hint}, expected {expected}; pass the collective the "
            "log measured, or leave --collective out"
        )
    for r in odd:
        r.flags.append(f"busbw {r.busbw_GBps:g} GB/s is not algbw {r.algbw_GBps:g} x the busbw factor ({expected})")


def note_flags(t: Table) -> None:
    """One note per table (the CLI prints notes) for the rows whose columns disagree."""
    flagged = t.flagged()
    if flagged:
        first = flagged[0]
        t.notes.append(
            f"{len(flagged)} row(s) have columns that disagree (kept, flagged, left out of the fit): "
            f"line {first.line}: {first.flags[0]}" + (" ..." if len(flagged) > 1 else "")
        )


# Bytes per element of nccl-tests' type names (nccl-tests src/common.cu test_typenames; rccl-tests the same)
TYPE_BYTES = {
    "int8": 1,
    "uint8": 1,
    "char": 1,
    "int32": 4,
    "uint32": 4,
    "int": 4,
    "int64": 8,
    "uint64": 8,
    "half": 2,
    "float16": 2,
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "bfloat16": 2,
    "f8e4m3": 1,
    "f8e5m2": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
}

# the collectives whose count column is per rank (nccl-tests' paramcount: size / nranks / type size), so that
# size / (count x type size) is the rank count; the others print count = size / type size
PER_RANK_COUNT = ("allgather", "reducescatter", "alltoall", "gather", "scatter")


def count_multiple(t: Table) -> int | None:
    """size / (count x type size), the same whole number on every row that prints both (None: no row does, or the
    rows disagree)."""
    found = set()
    for r in t.rows:
        element = TYPE_BYTES.get((r.dtype or "").lower())
        if not r.count or not element or not r.size:
            continue
        k, rest = divmod(r.size, r.count * element)
        if rest:
            return None
        found.add(k)
    return found.pop() if len(found) == 1 else None


def ranks_from_counts(t: Table) -> int | None:
    """The rank count the count column states: size / (count x type size), the same whole number >= 2 on every
    row with a count (exact, unlike busbw/algbw, whose printed digits cannot tell 127/128 from 71/72)."""
    if t.collective not in PER_RANK_COUNT:
        return None
    k = count_multiple(t)
    return k if k is not None and k >= 2 else None


def read_ranks_from_counts(t: Table) -> None:
    """Fill the rank count from the count column where the log lists no complete device lines, before anything
    guesses one; where busbw/algbw gave another, the count's exact one wins and the note says so."""
    ranks = ranks_from_counts(t)
    source = t.header.get("ranks_from")
    if ranks is None or ranks == t.ranks or source not in (None, "busbw/algbw"):
        return
    if ranks < (t.header.get("ranks_at_least") or 0):
        return  # the device lines name a higher rank: the count column is not what it seems
    before = t.ranks
    t.ranks, t.header["ranks_from"] = ranks, "count x type size"
    t.notes.append(
        f"rank count {ranks} read from size / (count x type size)"
        + (
            f" (busbw/algbw suggested {before}: its printed digits cannot tell)"
            if before
            else " (the device lines do not list every rank)"
            if t.header.get("devices_elided")
            else ""
        )
    )
    check_factor(t)
