"""Events mode: congestion-aware, rank-local progress, every transfer a flow, all state in arrays.

In the spirit of ASTRA-sim's congestion-aware backend. A rank starts its step k when its own
transfers of its previous step are done (sent and received) and reduced; a transfer starts when
both its ranks have started its step. That is a DAG over (rank, step) groups, kept as arrays:
each transfer waits on at most two groups, each group counts its unfinished transfers. A flow
serialises segment by segment (store-and-forward at ranks, cut-through across switches), then
pays the segment's latency; flows share every link and port max-min fairly, recomputed at every
event. Flows that start or finish at the same instant are one event: a symmetric step of p
transfers costs a handful of events, not p.

Complexity. Set-up: O(m log m) for m transfers (sorting the (rank, step) groups). Per event:
O(B x (F h + R)) for F active flows of h resources each, R resources and B progressive-filling
rounds (the distinct bottleneck levels, 1 to 3 on regular topologies), plus O(k log k) for the k
flows, transfers and groups that change. Events: about (1 + segments) per step when the ranks move
in lockstep, up to a few per transfer when they do not.
"""

from __future__ import annotations

import heapq
import math

import numpy as np

from collperf.schedule.arrays import ArraySchedule
from collperf.simulate.network import RoutedPairs


def max_min_rates(flow_of: np.ndarray, res_of: np.ndarray, flows: int, capacity: np.ndarray) -> np.ndarray:
    """Max-min fair rates by progressive filling over the flow x resource incidence (flow_of[i]
    uses res_of[i]): every round, the resources with the smallest fair share fix the rate of all
    their still-free flows at once (ties included). A flow that uses no resource gets inf."""
    rate = np.full(flows, np.inf)
    free = np.bincount(flow_of, minlength=flows) > 0
    left = capacity.astype(float)
    live = np.ones(len(flow_of), dtype=bool)
    while free.any():
        live &= free[flow_of]
        users = np.bincount(res_of[live], minlength=len(capacity))
        share = np.full(len(capacity), np.inf)
        np.divide(left, users, out=share, where=users > 0)
        smallest = share.min()
        bottleneck = share <= smallest * (1 + 1e-12)
        newly = np.zeros(flows, dtype=bool)
        newly[flow_of[live & bottleneck[res_of]]] = True
        rate[newly] = smallest
        left -= np.bincount(res_of[newly[flow_of]], minlength=len(capacity)) * smallest
        free &= ~newly
    return rate


def _gather(ptr: np.ndarray, values: np.ndarray, which: np.ndarray):
    """CSR rows `which`: (position in `which` of every value, the values)."""
    starts = ptr[which]
    lengths = ptr[which + 1] - starts
    owner = np.repeat(np.arange(len(which)), lengths)
    offsets = np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    return owner, values[np.repeat(starts, lengths) + offsets]


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


def events(s: ArraySchedule, net: RoutedPairs, chunk_bytes: float, gamma: float, route_of=None):
    """(time_s, step start, step end). route_of: per ArrayStep, its transfers' route ids (rounds.step_classes)."""
    n_steps = s.step_count
    step, src, dst, count, red, route = _flatten(s, route_of)
    nbytes = count * chunk_bytes
    pair = net.pair_index(src, dst, route)
    seg_first, seg_end = net.seg_ptr[pair], net.seg_ptr[pair + 1]
    g = _Groups(step, src, dst, n_steps)
    reduced = np.bincount(g.of_dst[red], weights=nbytes[red], minlength=len(g.step))
    step_start = np.full(n_steps, math.inf)
    step_end = np.zeros(n_steps)
    tolerance = 1e-9 * max(1.0, chunk_bytes)
    timers: list = []          # (time, seq, kind, payload)
    seq = 0
    flow_t = np.zeros(0, dtype=np.int64)     # active flows: transfer, segment, bytes left
    flow_seg = np.zeros(0, dtype=np.int64)
    flow_rem = np.zeros(0)
    now = 0.0

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
        add_flows(ts, seg_first[ts])

    def finish(ts):
        np.maximum.at(step_end, step[ts], now)
        groups, times = _counts(np.concatenate([g.of_src[ts], g.of_dst[ts]]))
        g.pending[groups] -= times
        done = groups[g.pending[groups] == 0]
        when = now + reduced[done] * gamma
        np.maximum.at(step_end, g.step[done], when)
        push(when, "advance", done)

    def advance(groups):
        _, waiting = _gather(g.waiter_ptr, g.waiter, groups)
        ts, times = _counts(waiting)
        g.need[ts] -= times
        ready = ts[g.need[ts] == 0]
        if len(ready):
            start(ready)

    start(np.flatnonzero(g.need == 0))
    while timers or len(flow_t):
        next_finish, rate = math.inf, np.zeros(0)
        if len(flow_t):
            flow_of, res_of = _gather(net.seg_res_ptr, net.seg_res, flow_seg)
            rate = max_min_rates(flow_of, res_of, len(flow_t), net.capacity)
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
            push(now + net.seg_latency[flow_seg[done]], "arrive", flow_t[done], flow_seg[done])
            flow_t, flow_seg, flow_rem = flow_t[~done], flow_seg[~done], flow_rem[~done]
        while timers and timers[0][0] <= now + 1e-18:
            _, _, kind, payload = heapq.heappop(timers)
            if kind == "arrive":
                ts, segs = payload
                onward = segs + 1 < seg_end[ts]
                if onward.any():
                    add_flows(ts[onward], segs[onward] + 1)
                if not onward.all():
                    finish(ts[~onward])
            else:
                advance(payload[0])
    step_start = np.where(np.isfinite(step_start), step_start, 0.0)
    return (float(step_end.max()) if n_steps else 0.0), step_start, step_end
