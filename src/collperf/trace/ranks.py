"""Across ranks: the same call on every rank (matched by process group and sequence), who arrived last and
what it cost the others, and how a collective's duration spreads from rank to rank.

A collective cannot finish before its last rank arrives, so a rank that starts early waits; the time
between a rank's start and the last start is what the last rank cost it. Each call's own time is
therefore its shortest duration over the ranks (the last to arrive waits for nobody). Start times are
compared as the traces give them: ranks on one host share its clock; across hosts the clocks must be
synchronised (NTP/PTP), or the skew includes their offset.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np


@dataclass
class Matched:
    """One collective call as every rank that holds it saw it."""

    process_group: str
    index: int  # its sequence number in its group (or its position)
    calls: dict  # rank -> Call

    @property
    def first(self):
        return self.calls[min(self.calls)]

    @property
    def arrival_s(self) -> float:
        """When the last rank arrived."""
        return max(c.start_s for c in self.calls.values())

    @property
    def skew_s(self) -> float:
        """The last arrival minus the first: what the earliest rank waited."""
        return self.arrival_s - min(c.start_s for c in self.calls.values())

    @property
    def transfer_s(self) -> float:
        """The call's time after the last arrival: each rank's end minus the last arrival, the minimum across
        ranks (a lower estimate: a rank may end late on its own). A rank that ended before the last arrival
        (a broadcast's root, whose send was buffered) did not need it and is left out. nan where no rank's end
        is known."""
        last = self.arrival_s
        ends = [c.end_s for c in self.calls.values() if np.isfinite(c.time_s) and c.end_s > last]
        return min(ends) - last if ends else float("nan")

    @property
    def time_s(self) -> float:
        """What is judged: with several ranks the transfer; with one, its duration (which includes waiting)."""
        if len(self.calls) > 1:
            return self.transfer_s
        return next(iter(self.calls.values())).time_s

    @property
    def last_rank(self) -> int:
        return max(self.calls, key=lambda r: (self.calls[r].start_s, r))

    def waits(self) -> dict:
        """rank -> time it waited for the last arrival."""
        last = max(c.start_s for c in self.calls.values())
        return {r: last - c.start_s for r, c in self.calls.items()}


@dataclass
class RankSkew:
    rank: int
    source: str
    calls: int = 0
    last_arrivals: int = 0
    lateness_s: list = field(default_factory=list)  # its start minus the earliest start, per call
    waited_s: float = 0.0  # time it waited for others
    cost_s: float = 0.0  # time others waited for it, where it came last

    def to_json(self) -> dict:
        late = float(np.median(self.lateness_s)) if self.lateness_s else 0.0
        return {
            "rank": self.rank,
            "source": self.source,
            "calls": self.calls,
            "last_arrivals": self.last_arrivals,
            "median_lateness_s": late,
            "waited_s": self.waited_s,
            "cost_to_others_s": self.cost_s,
        }


def match(traces) -> tuple[list[Matched], list[str]]:
    """Calls of all ranks grouped by (process group, its ranks, sequence): PyTorch's `Seq` where every call
    has one, else the call's position in its group on that rank. A call's `seq_scope` splits its group's numbering
    (NCCL's profiler numbers each collective type apart: the third AllReduce is not the third AllGather)."""
    by_group: dict = defaultdict(lambda: defaultdict(list))
    for t in traces:
        for c in t.calls:
            by_group[(c.process_group, c.pg_ranks, c.seq_scope)][t.rank].append(c)
    out, notes = [], []
    for (group, _, _), per_rank in by_group.items():
        seq = all(c.seq is not None for calls in per_rank.values() for c in calls)
        table: dict = defaultdict(dict)
        for rank, calls in per_rank.items():
            for i, c in enumerate(calls):
                table[c.seq if seq else i][rank] = c
        mismatched = 0
        for index in sorted(table):
            calls = table[index]
            kinds = {(c.collective, c.size_bytes) for c in calls.values()}
            mismatched += len(kinds) > 1
            out.append(Matched(group, index, calls))
        if mismatched:
            notes.append(
                f"{group}: {mismatched} calls differ between ranks (collective or size) at the same "
                "position: the traces cover different windows; give traces of the same profiled steps"
            )
    out.sort(key=lambda m: m.first.start_s)
    return out, notes


def skew(traces, matched: list[Matched]) -> list[RankSkew]:
    stats = {t.rank: RankSkew(t.rank, t.source) for t in traces}
    for m in matched:
        if len(m.calls) < 2:
            continue
        waits = m.waits()
        earliest = min(c.start_s for c in m.calls.values())
        last = m.last_rank
        for r, c in m.calls.items():
            s = stats[r]
            s.calls += 1
            s.lateness_s.append(c.start_s - earliest)
            s.waited_s += waits[r]
        if max(waits.values()) > 0:  # a tie has no last arrival
            stats[last].last_arrivals += 1
            stats[last].cost_s += sum(waits.values())
    return [stats[r] for r in sorted(stats)]


# A rank is named the straggler when it caused at least this share of all waiting; below it the last arrival
# moves between ranks (noise, a shared host) and the rank that cost most is reported without the name.
STRAGGLER_SHARE = 0.5


def straggler(stats: list[RankSkew]) -> dict | None:
    """The rank that cost the others most waiting, with how much and whether it is a clear straggler
    (`clear`: it caused at least STRAGGLER_SHARE of all waiting); None when no call was matched."""
    ranked = [s for s in stats if s.calls]
    if len(ranked) < 2:
        return None
    worst = max(ranked, key=lambda s: s.cost_s)
    total = sum(s.cost_s for s in ranked)
    late = float(np.median(worst.lateness_s)) if worst.lateness_s else 0.0
    return {
        "rank": worst.rank,
        "last_arrivals": worst.last_arrivals,
        "calls": worst.calls,
        "cost_to_others_s": worst.cost_s,
        "share_of_all_waiting": worst.cost_s / total if total else 0.0,
        "median_lateness_s": late,
        "clear": total > 0 and worst.cost_s >= STRAGGLER_SHARE * total,
    }


def spread(matched: list[Matched]) -> dict:
    """(process group, collective, size) -> the spread (max - min) of the ranks' median durations."""
    per: dict = defaultdict(lambda: defaultdict(list))
    for m in matched:
        f = m.first
        for r, c in m.calls.items():
            if np.isfinite(c.time_s):
                per[(f.process_group, f.collective, f.size_bytes)][r].append(c.time_s)
    out = {}
    for key, ranks in per.items():
        medians = [float(np.median(v)) for v in ranks.values()]
        out[key] = max(medians) - min(medians) if len(medians) > 1 else None
    return out
