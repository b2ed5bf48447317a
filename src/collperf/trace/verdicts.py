"""Who is stuck or slow, in words an operator acts on, from the calls matched across ranks (trace/ranks.py):

hang          a rank whose record stops before a call the others are in: "hang: rank 2 did not join
              allreduce seq 7 of group default_pg"; Flight Recorder dumps only (a profiler trace is a window)
desync        the same call (group and sequence id) with a different collective or size on some rank
compute-side  one rank arrives last in most calls, by more than the calls take once everyone is there:
              what it does before the call (compute, data loading, the host) is late, not the network
network-side  the calls spend most of their time after everyone has arrived: the transfer is slow; with
              a model of the system, how many times the model's time it takes; with several process groups,
              the host in every slow group; with NCCL's proxy waits (profiler plugin), the slow link
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
# ... or, with only a bound (a gloo/CPU job with --peak), at more than this many times the bound: gloo on a
# testbed link reaches 0.95 of the link rate in busbw at 64 MiB and about 0.96 at 4 MiB (benchmarks/README.md,
# "A flat testbed"), so twice the bound leaves room for the per-step latency of MiB-sized calls
SLOW_OVER_BOUND = 2.0
SHOWN = 3  # desyncs (and slow links) listed; the rest counted
# a link is slow when its sends' time on the wire is more than this many times the median link's
SLOW_LINK = 3.0


@dataclass
class Verdict:
    kind: str  # hang, desync, compute-side, network-side
    text: str
    rank: int | None = None
    process_group: str = ""
    seq: int | None = None

    def to_json(self) -> dict:
        return {
            "kind": self.kind,
            "text": self.text,
            "rank": self.rank,
            "process_group": self.process_group,
            "seq": self.seq,
        }


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
            out.append(
                Verdict(
                    "hang",
                    f"hang: rank {r} did not join {op} seq {missed} of group {g} (its last call "
                    f"there is seq {w.last_seq}; rank(s) {_list(ahead)} reached seq {top})",
                    r,
                    g,
                    missed,
                )
            )
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
        what = "; ".join(
            f"rank(s) {_list(rs)}: {coll} {units.format_size(size) if size is not None else '?'}"
            for (coll, size), rs in kinds.items()
        )
        out.append(
            Verdict(
                "desync",
                f"desync: call seq {m.index} of group {m.process_group} differs between ranks ({what})",
                None,
                m.process_group,
                m.index,
            )
        )
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
        uneven = sum(m.skew_s > 0 for m in full)  # calls where someone arrived last (the others: ties)
        share = count / uneven
        late = float(np.median([_lateness(m) for m in full if m.last_rank == rank]))
        if share >= max(LAST_SHARE, 2 / p) and late >= LATENESS_OVER_TRANSFER * transfer:
            out.append(
                Verdict(
                    "compute-side",
                    f"rank {rank}{_host(traces, rank)} arrives last in {share:.0%} of "
                    f"{_calls(uneven, len(full))}, by a median of {units.format_time(late)}: compute-side (the "
                    f"calls then take {units.format_time(transfer)}: the others wait for "
                    "what the rank does before the call, not for the network)",
                    rank,
                )
            )
    if transfer > skew:
        share = transfer / (transfer + skew)
        z, against = _over_model(rows)
        if z is not None and z > (SLOW_OVER_MODEL if against == "model" else SLOW_OVER_BOUND):
            out.append(
                Verdict(
                    "network-side",
                    f"calls after everyone arrived run at {z:.2g}x the {against} (median "
                    f"transfer {units.format_time(transfer)}, {share:.0%} of the calls' "
                    "time): network-side",
                )
            )
        elif z is None and share >= TRANSFER_SHARE:
            out.append(
                Verdict(
                    "network-side",
                    f"calls spend {share:.0%} of their time after everyone arrived "
                    f"(median transfer {units.format_time(transfer)}, arrival skew "
                    f"{units.format_time(skew)}): network-side; no model of this system "
                    "to say how slow (give --cluster)",
                )
            )
    return out


def _ratio(row) -> tuple[float | None, str]:
    """A row's time over NCCL's model, else over the bound (--peak on a CPU job); None where neither is known or
    the row was not judged."""
    if not row.time_s or not row.calls or not row.verdict.kind.judged:
        return None, ""
    if row.expected_s:
        return row.time_s / row.expected_s, "model"
    if row.bound_s:
        return row.time_s / row.bound_s, "bound"
    return None, ""


def _over_model(rows) -> tuple[float | None, str]:
    """The median of the rows' times over the model (or, where no row has a model, over the bound)."""
    judged = [_ratio(r) for r in rows]
    for against in ("model", "bound"):
        z = [v for v, a in judged if a == against]
        if z:
            return float(np.median(z)), against
    return None, ""


def slow_host(traces, rows) -> list[Verdict]:
    """The host (or, on one host, the rank) in every process group whose transfer runs slow against the model
    (or the bound) and in no group that runs as it should: the calls through it are slow, the others are not.
    Needs groups that leave the host out; one world group cannot tell which member is slow."""
    names = {t.rank: t.host for t in traces}
    by_host = len({h for h in names.values() if h}) > 1

    def unit(r):
        return f"host {names[r]}" if by_host and names.get(r) else f"rank {r}"

    groups: dict = {}
    for r in rows:
        z, against = _ratio(r)
        if z is not None and r.pg_ranks:
            groups.setdefault(tuple(r.pg_ranks), []).append((z, against))
    slow, fine = [], []
    for members, zs in groups.items():
        against = "model" if any(a == "model" for _, a in zs) else "bound"
        z = float(np.median([v for v, a in zs if a == against]))
        (slow if z > (SLOW_OVER_MODEL if against == "model" else SLOW_OVER_BOUND) else fine).append(
            (members, z, against)
        )
    if not slow or not fine:
        return []
    units_of = [{unit(r) for r in m} for m, _, _ in slow]
    suspects = set.intersection(*units_of) - set().union(*({unit(r) for r in m} for m, _, _ in fine))
    if len(suspects) != 1:
        return []
    who = suspects.pop()
    z = float(np.median([v for _, v, _ in slow]))
    against = slow[0][2]
    fast = float(np.median([v for _, v, _ in fine]))
    return [
        Verdict(
            "network-side",
            f"calls through {who} run at {z:.2g}x the {against} after everyone has arrived "
            f"({len(slow)} process group(s) that include it), the {len(fine)} group(s) without "
            f"it at {fast:.2g}x: network-side, {who}'s link or NIC",
            int(who.split()[1]) if who.startswith("rank ") else None,
        )
    ]


def _calls(uneven: int, total: int) -> str:
    return "calls" if uneven == total else f"the {uneven} of {total} calls with a last arrival"


def _lateness(m) -> float:
    """The last arrival minus the one before it."""
    starts = sorted(c.start_s for c in m.calls.values())
    return starts[-1] - starts[-2]


def slow_links(traces) -> list[Verdict]:
    """From NCCL's proxy waits (profiler plugin traces): the sends whose time on the wire (SendWait, per call) is
    more than SLOW_LINK times the median link's, and the rank they all go from or to. A slow link shows there and
    nowhere else: the other links' proxies wait for their peers (SendPeerWait, RecvWait), not on the wire."""
    wire: dict = {}
    for t in traces:
        for w in t.links:
            if w.send and "SendWait" in w.waits_s:
                wire.setdefault((t.rank, w.peer), []).append(w.waits_s["SendWait"])
    if len(wire) < 3:
        return []
    per = {k: float(np.median(v)) for k, v in wire.items()}
    # each link against the median of the others: a ring of four has two links through a slow host of four
    slow = sorted(k for k, x in per.items() if x > SLOW_LINK * float(np.median([y for j, y in per.items() if j != k])))
    if not slow or len(slow) > len(per) // 2:
        return []
    typical = float(np.median([x for k, x in per.items() if k not in slow]))
    common = set.intersection(*({a, b} for a, b in slow))
    who = f"rank {min(common)}{_host(traces, min(common))}'s link or NIC" if len(common) == 1 else "those links"
    links = ", ".join(f"{a} -> {b}" for a, b in slow[:SHOWN]) + (" and more" if len(slow) > SHOWN else "")
    worst = max(per[k] for k in slow)
    return [
        Verdict(
            "network-side",
            f"sends {links} spend {units.format_time(worst)} per call on the wire (NCCL's proxy "
            f"SendWait), {worst / typical:.2g}x the median link's "
            f"{units.format_time(typical)}: network-side, {who}",
            min(common) if len(common) == 1 else None,
        )
    ]


def verdicts(traces, matched, rows=()) -> list[Verdict]:
    return (
        hangs(traces, matched)
        + desyncs(matched)
        + stragglers(traces, matched, rows)
        + slow_host(traces, rows)
        + slow_links(traces)
    )
