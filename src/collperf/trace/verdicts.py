"""Who is stuck or slow, in words an operator acts on, from the calls matched across ranks (trace/ranks.py):

  hang          a rank whose record stops before a call the others are in: "hang: rank 2 did not join
                allreduce seq 7 of group default_pg"; Flight Recorder dumps only (a profiler trace is a window)
  desync        the same call (group and sequence id) with a different collective or size on some rank
  compute-side  one rank arrives last in most calls, by more than the calls take once everyone is there:
                what it does before the call (compute, data loading, the host) is late, not the network
  network-side  the calls spend most of their time after everyone has arrived: the transfer is slow; with
                a model of the system, how many times the model's time it takes
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

import numpy as np

from collperf import units

# a rank is a compute-side straggler when it arrives last in at least this share of the calls (and in more
# than twice its share by chance, 1/p) ...
LAST_SHARE = 0.5
# ... and its median lateness (its arrival minus the one before it) is at least the median transfer: the
# others wait for it longer than the call itself then takes. A rank behind a slow link also tends to arrive
# last (it leaves the previous call last), but by less than the slow transfer.
LATENESS_OVER_TRANSFER = 1.0
# network-side: the transfer at more than this many times the model's time ...
SLOW_OVER_MODEL = 1.5
# ... or, with no model (a CPU job), the calls spending at least this share of their time after the last
# arrival: a weaker sign, worded as such (a healthy job's calls on loopback spend about half there)
TRANSFER_SHARE = 2 / 3
SHOWN = 3            # desyncs listed by call; the rest counted


@dataclass
class Verdict:
    kind: str                     # hang, desync, compute-side, network-side
    text: str
    rank: int | None = None
    process_group: str = ""
    seq: int | None = None

    def to_json(self) -> dict:
        return {"kind": self.kind, "text": self.text, "rank": self.rank, "process_group": self.process_group,
                "seq": self.seq}


def _op(matched_by_key: dict, group: str, seq: int, fallback: str) -> str:
    m = matched_by_key.get((group, seq))
    return m.first.collective if m is not None else fallback.split(":", 1)[-1]


def hangs(traces, matched) -> list[Verdict]:
    """Per group of the Flight Recorder dumps: a rank whose last call is before the group's last call."""
    by_key = {(m.process_group, m.index): m for m in matched}
    out = []
    groups = sorted({g for t in traces for g in t.windows})
    for g in groups:
        have = {t.rank: t.windows[g] for t in traces if g in t.windows}
        top = max(w.last_seq for w in have.values())
        ahead = sorted(r for r, w in have.items() if w.last_seq == top)
        for r, w in sorted(have.items()):
            if w.last_seq >= top:
                continue
            missed = w.last_seq + 1
            op = _op(by_key, g, missed, have[ahead[0]].last_op if top == missed else "call")
            out.append(Verdict("hang", f"hang: rank {r} did not join {op} seq {missed} of group {g} (its last call "
                                       f"there is seq {w.last_seq}; rank(s) {_list(ahead)} reached seq {top})", r, g, missed))
    return out


def _list(ranks) -> str:
    ranks = list(ranks)
    return ", ".join(map(str, ranks[:8])) + (f" and {len(ranks) - 8} more" if len(ranks) > 8 else "")


def desyncs(matched) -> list[Verdict]:
    """Calls matched by sequence id whose collective or size differs between ranks."""
    out, more = [], 0
    for m in matched:
        if len(m.calls) < 2 or any(c.seq is None for c in m.calls.values()):
            continue
        kinds = defaultdict(list)
        for r, c in sorted(m.calls.items()):
            kinds[(c.collective, c.size_bytes)].append(r)
        if len(kinds) < 2:
            continue
        if len(out) >= SHOWN:
            more += 1
            continue
        what = "; ".join(f"rank(s) {_list(rs)}: {coll} {units.format_size(size) if size is not None else '?'}"
                         for (coll, size), rs in kinds.items())
        out.append(Verdict("desync", f"desync: call seq {m.index} of group {m.process_group} differs between ranks "
                                     f"({what})", None, m.process_group, m.index))
    if more:
        out.append(Verdict("desync", f"desync: {more} more calls differ between ranks"))
    return out


def _host(traces, rank: int) -> str:
    host = next((t.host for t in traces if t.rank == rank and t.host), None)
    return f" (host {host})" if host else ""


def stragglers(traces, matched, rows=()) -> list[Verdict]:
    """The compute-side straggler, or the network-side verdict, from the calls every rank is in."""
    full = [m for m in matched if len(m.calls) > 1 and np.isfinite(m.transfer_s) and m.first.collective != "barrier"]
    if not full:
        return []
    p = max(len(m.calls) for m in full)
    last = Counter(m.last_rank for m in full if m.skew_s > 0)
    transfer = float(np.median([m.transfer_s for m in full]))
    skew = float(np.median([m.skew_s for m in full]))
    out = []
    if last:
        rank, count = last.most_common(1)[0]
        uneven = sum(m.skew_s > 0 for m in full)      # calls where someone arrived last (the others: ties)
        share = count / uneven
        late = float(np.median([_lateness(m) for m in full if m.last_rank == rank]))
        if share >= max(LAST_SHARE, 2 / p) and late >= LATENESS_OVER_TRANSFER * transfer:
            out.append(Verdict("compute-side", f"rank {rank}{_host(traces, rank)} arrives last in {share:.0%} of "
                                               f"{_calls(uneven, len(full))}, by a median of {units.format_time(late)}: compute-side (the "
                                               f"calls then take {units.format_time(transfer)}: the others wait for "
                                               "what the rank does before the call, not for the network)", rank))
    if transfer > skew:
        share = transfer / (transfer + skew)
        judged = [r.time_s / r.expected_s for r in rows if r.expected_s and r.time_s and r.calls]
        z = float(np.median(judged)) if judged else None
        if z is not None and z > SLOW_OVER_MODEL:
            out.append(Verdict("network-side", f"calls after everyone arrived run at {z:.2g}x the model (median "
                                               f"transfer {units.format_time(transfer)}, {share:.0%} of the calls' "
                                               "time): network-side"))
        elif z is None and share >= TRANSFER_SHARE:
            out.append(Verdict("network-side", f"calls spend {share:.0%} of their time after everyone arrived "
                                               f"(median transfer {units.format_time(transfer)}, arrival skew "
                                               f"{units.format_time(skew)}): network-side; no model of this system "
                                               "to say how slow (give --cluster)"))
    return out


def _calls(uneven: int, total: int) -> str:
    return "calls" if uneven == total else f"the {uneven} of {total} calls with a last arrival"


def _lateness(m) -> float:
    """The last arrival minus the one before it."""
    starts = sorted(c.start_s for c in m.calls.values())
    return starts[-1] - starts[-2]


def verdicts(traces, matched, rows=()) -> list[Verdict]:
    return hangs(traces, matched) + desyncs(matched) + stragglers(traces, matched, rows)
