"""Events mode: congestion-aware, rank-local progress, all state in arrays.

In the spirit of ASTRA-sim's congestion-aware backend. A rank starts its step k when its own
transfers of its previous step are done (sent and received) and reduced; a transfer starts when
both its ranks have started its step. That is a DAG over (rank, step) groups, kept as arrays:
each transfer waits on at most two groups, each group counts its unfinished transfers. A flow
serialises segment by segment (store-and-forward at ranks, cut-through across switches), then
pays the segment's latency; flows share every link and port max-min fairly, recomputed at every
event. Flows that start or finish at the same instant are one event: a symmetric step of p
transfers costs a handful of events, not p.

The loop (`run`) moves `Flows`: one per schedule transfer (`per_transfer`, any schedule), or one
per class of like transfers that provably move in lockstep (grouped.py), where a "rank" is a class
of ranks and a flow weighs on a resource as many times as its class has members crossing it.

Complexity. Set-up: O(m log m) for m transfers (sorting the (rank, step) groups). Per event:
O(B x (F h + R)) for F active flows of h resources each, R resources and B progressive-filling
rounds (the distinct bottleneck levels, 1 to 3 on regular topologies), plus O(k log k) for the k
flows, transfers and groups that change. Events: about (1 + segments) per step when the ranks move
in lockstep, up to a few per transfer when they do not.
"""

from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass

import numpy as np

from collperf.schedule.arrays import ArraySchedule
from collperf.simulate.network import RoutedPairs

# how often (seconds of wall time) the loop reports its progress
_PROGRESS_EVERY_S = 0.2


@dataclass
class Flows:
    """What the event loop moves. Per transfer: its step, its two ends (ranks, or rank classes), bytes,
    whether it reduces, `in_weight` (how many of it each destination receives: 1 per transfer, the
    class's share when grouped) and its segments seg_first .. seg_end - 1. Per segment: resources
    (CSR seg_res_ptr / seg_res), `seg_weight` (times each of its resources carries the flow; None: 1)
    and latency. Per resource: capacity, bytes/s."""

    steps: int
    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    nbytes: np.ndarray
    red: np.ndarray
    in_weight: np.ndarray | None
    seg_first: np.ndarray
    seg_end: np.ndarray
    seg_res_ptr: np.ndarray
    seg_res: np.ndarray
    seg_weight: np.ndarray | None
    seg_latency: np.ndarray
    capacity: np.ndarray


def max_min_rates(
    flow_of: np.ndarray, res_of: np.ndarray, flows: int, capacity: np.ndarray, weight: np.ndarray | None = None
) -> np.ndarray:
    """Max-min fair rates by progressive filling over the flow x resource incidence (flow_of[i]
    uses res_of[i], weight[i] times: a class of like flows): every round, the resources with the
    smallest fair share fix the rate of all their still-free flows at once (ties included). A flow
    that uses no resource gets inf."""
    rate = np.full(flows, np.inf)
    free = np.bincount(flow_of, minlength=flows) > 0
    left = capacity.astype(float)
    live = np.ones(len(flow_of), dtype=bool)
    while free.any():
        live &= free[flow_of]
        users = np.bincount(res_of[live], weights=None if weight is None else weight[live], minlength=len(capacity))
        share = np.full(len(capacity), np.inf)
        np.divide(left, users, out=share, where=users > 0)
        smallest = share.min()
        bottleneck = share <= smallest * (1 + 1e-12)
        newly = np.zeros(flows, dtype=bool)
        newly[flow_of[live & bottleneck[res_of]]] = True
        rate[newly] = smallest
        fixed = newly[flow_of]
        left -= (
            np.bincount(res_of[fixed], weights=None if weight is None else weight[fixed], minlength=len(capacity))
            * smallest
        )
        free &= ~newly
    return rate


def csr_rows(ptr: np.ndarray, values: np.ndarray | None, which: np.ndarray):
    """CSR rows `which`: (position in `which` of every value, the values; or their indices with None)."""
    starts = ptr[which]
    lengths = ptr[which + 1] - starts
    owner = np.repeat(np.arange(len(which)), lengths)
    at = np.arange(len(owner)) + np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return owner, at if values is None else values[at]


def _flatten(s: ArraySchedule, route_of=None):
    """Every transfer of every expanded step: (step, src, dst, chunk count, reduce, route id or None)."""
    parts, k = [], 0
    for i, st in enumerate(s.steps):
        src, dst, count, red = st.transfers()
        cols = (src, dst, count, red) if route_of is None else (src, dst, count, red, route_of[i])
        parts.append((np.repeat(np.arange(k, k + st.repeat), len(src)), *(np.tile(x, st.repeat) for x in cols)))
        k += st.repeat
    if not parts:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty, empty, np.zeros(0, dtype=bool), None
    cols = tuple(np.concatenate(col) for col in zip(*parts))
    return cols if route_of is not None else (*cols, None)


def per_transfer(s: ArraySchedule, net: RoutedPairs, chunk_bytes: float, route_of=None) -> Flows:
    """Every transfer of the schedule a flow of its own. route_of: per ArrayStep, its transfers'
    route ids (rounds.step_classes)."""
    step, src, dst, count, red, route = _flatten(s, route_of)
    pair = net.pair_index(src, dst, route)
    return Flows(
        s.step_count,
        step,
        src,
        dst,
        count * chunk_bytes,
        red,
        None,
        net.seg_ptr[pair],
        net.seg_ptr[pair + 1],
        net.seg_res_ptr,
        net.seg_res,
        None,
        net.seg_latency,
        net.capacity,
    )


class _Groups:
    """(rank, step) groups: who waits on whom."""

    def __init__(self, step, src, dst, steps: int):
        m = len(step)
        keys, inverse = np.unique(np.concatenate([src * steps + step, dst * steps + step]), return_inverse=True)
        self.of_src, self.of_dst = inverse[:m], inverse[m:]
        self.pending = np.bincount(inverse, minlength=len(keys))
        self.step = keys % steps
        rank = keys // steps
        prev = np.arange(len(keys)) - 1
        if len(keys):
            prev[0] = -1
            prev[1:][rank[1:] != rank[:-1]] = -1
        waits = np.concatenate([prev[self.of_src], prev[self.of_dst]])
        self.need = (prev[self.of_src] >= 0).astype(np.int64) + (prev[self.of_dst] >= 0)
        who = np.tile(np.arange(m), 2)[waits >= 0]
        waits = waits[waits >= 0]
        order = np.argsort(waits, kind="stable")
        self.waiter = who[order]
        self.waiter_ptr = np.searchsorted(waits[order], np.arange(len(keys) + 1))


def _counts(ids: np.ndarray):
    return np.unique(ids, return_counts=True)


def events(s: ArraySchedule, net: RoutedPairs, chunk_bytes: float, gamma: float, route_of=None, progress=None):
    """(time_s, step start, step end), every transfer a flow of its own."""
    return run(per_transfer(s, net, chunk_bytes, route_of), chunk_bytes, gamma, progress)


def run(f: Flows, chunk_bytes: float, gamma: float, progress=None):
    """(time_s, step start, step end) of the flows. progress(done, total): called now and then
    with the (rank, step) groups done so far."""
    n_steps, step, nbytes = f.steps, f.step, f.nbytes
    g = _Groups(step, f.src, f.dst, n_steps)
    red = f.red
    weights = nbytes[red] if f.in_weight is None else nbytes[red] * f.in_weight[red]
    reduced = np.bincount(g.of_dst[red], weights=weights, minlength=len(g.step))
    step_start = np.full(n_steps, math.inf)
    step_end = np.zeros(n_steps)
    tolerance = 1e-9 * max(1.0, chunk_bytes)
    timers: list = []  # (time, seq, kind, payload)
    seq = 0
    flow_t = np.zeros(0, dtype=np.int64)  # active flows: transfer, segment, bytes left
    flow_seg = np.zeros(0, dtype=np.int64)
    flow_rem = np.zeros(0)
    now = 0.0
    groups_done, reported = 0, time.monotonic()

    def push(times, kind, *payload):
        nonlocal seq
        if not len(times):
            return
        if np.all(times == times[0]):
            heapq.heappush(timers, (float(times[0]), seq, kind, payload))
            seq += 1
            return
        for t in np.unique(times):
            same = times == t
            heapq.heappush(timers, (float(t), seq, kind, tuple(x[same] for x in payload)))
            seq += 1

    def add_flows(ts, segs):
        nonlocal flow_t, flow_seg, flow_rem
        flow_t = np.concatenate([flow_t, ts])
        flow_seg = np.concatenate([flow_seg, segs])
        flow_rem = np.concatenate([flow_rem, nbytes[ts]])

    def start(ts):
        np.minimum.at(step_start, step[ts], now)
        add_flows(ts, f.seg_first[ts])

    def finish(ts):
        nonlocal groups_done
        np.maximum.at(step_end, step[ts], now)
        groups, times = _counts(np.concatenate([g.of_src[ts], g.of_dst[ts]]))
        g.pending[groups] -= times
        done = groups[g.pending[groups] == 0]
        groups_done += len(done)
        when = now + reduced[done] * gamma
        np.maximum.at(step_end, g.step[done], when)
        push(when, "advance", done)

    def advance(groups):
        _, waiting = csr_rows(g.waiter_ptr, g.waiter, groups)
        ts, times = _counts(waiting)
        g.need[ts] -= times
        ready = ts[g.need[ts] == 0]
        if len(ready):
            start(ready)

    start(np.flatnonzero(g.need == 0))
    while timers or len(flow_t):
        next_finish, rate = math.inf, np.zeros(0)
        if len(flow_t):
            flow_of, at = csr_rows(f.seg_res_ptr, None, flow_seg)
            res_of, weight = f.seg_res[at], None if f.seg_weight is None else f.seg_weight[at]
            rate = max_min_rates(flow_of, res_of, len(flow_t), f.capacity, weight)
            finish_in = np.full(len(rate), np.inf)
            np.divide(flow_rem, rate, out=finish_in, where=rate > 0)
            next_finish = float(finish_in.min())
        dt = min(next_finish, timers[0][0] - now if timers else math.inf)
        if math.isinf(dt):
            raise RuntimeError("event simulation stalled: a schedule step can never start")
        if len(flow_t):
            flow_rem = np.where(np.isfinite(rate), flow_rem - rate * dt, 0.0)
        now += dt
        done = flow_rem <= tolerance
        if done.any():
            push(now + f.seg_latency[flow_seg[done]], "arrive", flow_t[done], flow_seg[done])
            flow_t, flow_seg, flow_rem = flow_t[~done], flow_seg[~done], flow_rem[~done]
        while timers and timers[0][0] <= now + 1e-18:
            _, _, kind, payload = heapq.heappop(timers)
            if kind == "arrive":
                ts, segs = payload
                onward = segs + 1 < f.seg_end[ts]
                if onward.any():
                    add_flows(ts[onward], segs[onward] + 1)
                if not onward.all():
                    finish(ts[~onward])
            else:
                advance(payload[0])
        if progress is not None and time.monotonic() - reported > _PROGRESS_EVERY_S:
            progress(groups_done, len(g.step))
            reported = time.monotonic()
    if progress is not None:
        progress(len(g.step), len(g.step))
    step_start = np.where(np.isfinite(step_start), step_start, 0.0)
    return (float(step_end.max()) if n_steps else 0.0), step_start, step_end
