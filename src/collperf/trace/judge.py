"""A verdict per collective: calls grouped by (process group, collective, size), each group's median time
against the expected band and the bound on the assumed system, and the choice check (did NCCL run what
its model picks for that size on that system?)."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace

import numpy as np

from collperf import units
from collperf.collectives import COLLECTIVES, busbw_factor, get_collective
from collperf.diagnose import Assumed
from collperf.expect.expectation import expectation
from collperf.diagnose import verdict as V
from collperf.errors import UsageError
from collperf.model.nccl import select, tuning_table
from collperf.model.nccl.constants import FUNCTIONS
from collperf.model.nccl.tuning import TuningTable, entry_times_us
from collperf.trace.flight import BARRIER
from collperf.trace.system import group_system


TRANSFER = "transfer after the last arrival (the minimum across ranks)"
DURATION = "one rank's duration, which includes waiting for the other ranks"
# what a one-rank row judged slower adds: the time may be a late peer, not the transfer
ONE_RANK_SLOWER = "one rank's duration: part of it may be waiting for a late peer (give every rank's trace)"


@dataclass
class Row:
    process_group: str
    collective: str
    size_bytes: int | None
    dtype: str
    group_size: int
    algorithm: str
    protocol: str
    calls: int
    time_s: float  # median over the calls
    total_s: float
    busbw_GBps: float | None
    expected_s: float | None
    bound_s: float | None
    verdict: V.Verdict | None  # None until judged (rows() judges every row it makes)
    choice_note: str
    worst: list = field(default_factory=list)  # the slowest calls: {time_s, start_s, rank}
    rank_spread_s: float | None = None
    pg_ranks: tuple = ()
    times_s: list = field(default_factory=list, repr=False)
    basis: str = TRANSFER  # what time_s is: the transfer after the last arrival, or a rank's duration
    wait_s: float | None = None  # the median arrival skew (several ranks): what the first rank waited

    def to_json(self) -> dict:
        keys = (
            "process_group",
            "collective",
            "size_bytes",
            "dtype",
            "group_size",
            "algorithm",
            "protocol",
            "calls",
            "time_s",
            "total_s",
            "busbw_GBps",
            "expected_s",
            "bound_s",
            "verdict",
            "choice_note",
            "worst",
            "rank_spread_s",
            "basis",
            "wait_s",
        )
        return {k: getattr(self, k) for k in keys} | {"verdict": self.verdict.text if self.verdict else ""}


def expected_and_bound(collective: str, sizes, assumed: Assumed, peak_Bps: float | None = None, group_size: int = 0):
    """The one call into diagnose's expectation: NCCL's expected time (the band's centre) and the physical
    bound per size on the assumed system (or the flat bound of --peak). Every verdict of a trace goes through
    here."""
    # the bound of --peak is per rank in busbw: the process group's own factor (no system may give its size)
    factor = busbw_factor(collective, group_size) if peak_Bps is not None and group_size > 1 else None
    return expectation(collective, sizes, assumed, peak_Bps, factor)


def nccl_name(algorithm: str, protocol: str) -> str:
    """'RING/LL', 'NVLS_TREE/Simple': NCCL's spelling of the algorithm, ours of the protocol."""
    return f"{algorithm.upper().replace('-', '_')}/{protocol}"


def choice_note(collective: str, size_bytes: int, algorithm: str, protocol: str, system) -> str:
    """'' when NCCL ran what its model picks for this size on `system`, else what ran, what the model picks,
    who can set it and the model's cost of the difference."""
    if system is None or algorithm == "-" or collective not in FUNCTIONS or not size_bytes or system.ranks < 2:
        return ""
    n = np.array([float(size_bytes)])
    pick = select(collective, n, system)
    chosen = (str(pick.algorithm[0]), str(pick.protocol[0]))
    if chosen == (algorithm, protocol):
        return ""
    knobs = " and ".join(
        k for k, differs in (("NCCL_ALGO", chosen[0] != algorithm), ("NCCL_PROTO", chosen[1] != protocol)) if differs
    )
    head = (
        f"{nccl_name(algorithm, protocol)} at {units.format_size(size_bytes)} where NCCL's default picks "
        f"{nccl_name(*chosen)}: {knobs} or a tuner plugin set it"
    )
    table = tuning_table(collective, system)
    entries = TuningTable.entries()
    if (algorithm, protocol) not in entries:
        return head
    lat, bw = entry_times_us(table, system, n)
    ran = lat[entries.index((algorithm, protocol)), 0] + bw[entries.index((algorithm, protocol)), 0]
    best = float(pick.latency_s[0] + pick.bandwidth_s[0]) * 1e6
    if not np.isfinite(ran):
        return head + f"; NCCL's model has it disabled on {system.name}"
    return head + f"; model cost {ran / best:.2g}x"


def _groups(matched) -> dict:
    out = defaultdict(list)
    for m in matched:
        f = m.first
        out[(f.process_group, f.collective, f.size_bytes)].append(m)
    return out


def _most(values):
    return Counter(values).most_common(1)[0][0]


# our algorithm names -> NCCL_ALGO's (model/nccl/env.py NCCL_ALGO_NAMES): how the model is told what ran
_NCCL_ALGO = {
    "ring": "Ring",
    "tree": "Tree",
    "nvls": "NVLS",
    "nvls-tree": "NVLSTree",
    "collnet-direct": "CollNetDirect",
    "collnet-chain": "CollNetChain",
    "pat": "PAT",
}


def rows(
    matched, assumed: Assumed, spreads: dict | None = None, peak_Bps: float | None = None, as_run: bool = False
) -> list[Row]:
    """One Row per (process group, collective, size), largest total time first. `as_run`: price each row with the
    algorithm and protocol its calls ran (a record that states them: NCCL Inspector's coll_algo/coll_proto), not
    with NCCL's own pick; the choice check still compares with the pick."""
    out = []
    for (group, collective, size), ms in _groups(matched).items():
        ms = [m for m in ms if np.isfinite(m.time_s)]  # the last call of a dump without durations
        if collective == BARRIER or not ms:
            continue
        times = [m.time_s for m in ms]
        firsts = [m.first for m in ms]
        p = _most(c.group_size for c in firsts)
        median = float(np.median(times))
        slow = sorted(ms, key=lambda m: -m.time_s)[:3]
        worst = [
            {"time_s": m.time_s, "start_s": m.first.start_s, "rank": min(m.calls, key=lambda r: m.calls[r].time_s)}
            for m in slow
        ]
        busbw = (
            get_collective(collective).bandwidths_GBps(size, p, median)[1]
            if size and median > 0 and collective in COLLECTIVES
            else None
        )
        skews = [m.skew_s for m in ms if len(m.calls) > 1]
        out.append(
            Row(
                group,
                collective,
                size,
                _most(c.dtype for c in firsts),
                p,
                _most(c.algorithm for c in firsts),
                _most(c.protocol for c in firsts),
                len(ms),
                median,
                float(sum(times)),
                busbw,
                None,
                None,
                None,
                "",
                worst,
                (spreads or {}).get((group, collective, size)),
                _most(c.pg_ranks for c in firsts),
                times,
                wait_s=float(np.median(skews)) if skews else None,
            )
        )
    for r in out:
        _judge(r, assumed, peak_Bps, as_run)
    return sorted(out, key=lambda r: -r.total_s)


def one_rank(table: list[Row]) -> list[str]:
    """With one rank's trace a call's duration includes waiting for the others: judge only the calls whose
    time grows with size as a transfer would (no larger call of the same collective and group is faster);
    the notes that say so."""
    families = defaultdict(list)
    for r in table:
        r.basis = DURATION
        if r.size_bytes is not None:
            families[(r.process_group, r.collective)].append(r)
    waited = 0
    for rows_ in families.values():
        rows_.sort(key=lambda r: r.size_bytes)
        for i, r in enumerate(rows_):
            faster = [b for b in rows_[i + 1 :] if b.time_s < r.time_s]
            if faster and r.verdict.kind.judged:
                waited += 1
                r.verdict = V.Verdict(
                    V.Kind.NOT_JUDGED,
                    f"not judged: takes longer ({units.format_time(r.time_s)}) "
                    f"than the {units.format_size(faster[0].size_bytes)} {r.collective} "
                    f"({units.format_time(faster[0].time_s)}): its duration includes waiting for "
                    "other ranks",
                )
            elif r.verdict.kind.slower:
                r.verdict = r.verdict.then(f"; {ONE_RANK_SLOWER}")
    notes = [
        "one rank's trace: a call's duration includes waiting for the other ranks, so a slow call may be a "
        "late peer; only calls whose time grows with size are judged; give every rank's trace to split waiting "
        "from transfer"
    ]
    if waited:
        notes.append(
            f"{waited} (group, collective, size) rows take longer than a larger call of the same collective: "
            "not judged (waiting, not transfer)"
        )
    return notes


def sized(assumed: Assumed, row: Row) -> Assumed:
    """The assumed system cut to the row's process group."""
    if assumed.system is None:
        return assumed
    return Assumed(
        group_system(assumed.system, row.pg_ranks, row.group_size), assumed.values, assumed.notes, assumed.why_none
    )


def _as_run(assumed: Assumed, row: Row) -> Assumed:
    """The row's system with NCCL told the algorithm and protocol the calls ran (NCCL_ALGO/NCCL_PROTO), where the
    collective is one NCCL's tuning prices and both are known."""
    algo = _NCCL_ALGO.get(row.algorithm)
    if assumed.system is None or algo is None or row.protocol == "-" or row.collective not in FUNCTIONS:
        return assumed
    return Assumed(
        replace(assumed.system, nccl_algo=algo, nccl_proto=row.protocol),
        assumed.values,
        assumed.notes,
        assumed.why_none,
    )


def _judge(row: Row, assumed: Assumed, peak_Bps: float | None = None, as_run: bool = False) -> None:
    if row.size_bytes is None or row.collective not in COLLECTIVES:
        row.verdict = V.Verdict(V.Kind.NOT_JUDGED, "not judged: the trace does not give this call's size")
        return
    if row.group_size < 2:
        row.verdict = V.Verdict(V.Kind.NOT_JUDGED, "not judged: a group of one rank does not communicate")
        return
    mine = sized(assumed, row)
    try:
        ex = expected_and_bound(
            row.collective, [row.size_bytes], _as_run(mine, row) if as_run else mine, peak_Bps, row.group_size
        )
    except UsageError as e:
        row.verdict = V.Verdict(V.Kind.NOT_JUDGED, f"not judged: {e}")
        return
    row.expected_s = float(ex.expected_s[0]) if ex.expected_s is not None else None
    row.bound_s = float(ex.bound_s[0]) if ex.bound_s is not None else None
    said, _ = V.verdict(row.time_s, row.expected_s, row.bound_s, False, bound_latency_s=ex.bound_latency_s)
    above = said.kind is V.Kind.ABOVE_BOUND
    if above and row.bound_s is not None:
        # a trace prints no findings: say here what the call beat and what to check
        said = V.Verdict(
            V.Kind.ABOVE_BOUND,
            f"above the bound: faster than the "
            f"{units.format_time(row.bound_s + ex.bound_latency_s)} the assumed hardware allows (the "
            "bound with the links' latency): check the system assumed (--cluster) and this call's size",
        )
    if row.expected_s is None and row.bound_s and not above:
        # no expected time (a CPU job with --peak): how far from the bound, which the row's time cannot beat
        said = V.Verdict(
            V.Kind.AGAINST_BOUND,
            f"{row.time_s / row.bound_s:.3g}x the bound "
            f"({units.format_time(row.time_s)} vs {units.format_time(row.bound_s)}): no expected time on "
            "this system, only the bound",
        )
    if row.expected_s is None and assumed.system is None and row.bound_s is None:
        said = V.Verdict(V.Kind.NOT_JUDGED, f"not judged: {assumed.why_none}")
    row.verdict = said
    row.choice_note = choice_note(row.collective, row.size_bytes, row.algorithm, row.protocol, mine.system)
