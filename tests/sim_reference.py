"""The simulator as it was before the array IR (tuple schedules, per-transfer Python objects), kept
unchanged as the reference that tests/test_simulate_arrays.py holds the array simulator to.

Simulate a schedule on a topology: total time, per-step timeline, per-link bytes and utilisation.

Resources are the directed links of the topology (full-duplex: u->v and v->u are separate) and
each rank's port, out and in (`port_Bps`). A transfer of b bytes uses, on its route, every link and
the two ports.

rounds  Fast and vectorized. Step by step: the bytes on every resource are added up; a transfer
        takes its route's latency plus the most loaded resource it crosses (bytes / capacity); a
        step lasts as long as its slowest transfer, plus the most bytes any rank reduces x gamma.
events  Congestion-aware, in the spirit of ASTRA-sim's congestion-aware backend: a rank starts
        step k+1 when its own transfers of step k (sent and received) are done and reduced;
        messages go store-and-forward from rank to rank (a GPU forwarding over NVLink), and
        cut-through across switches: a flow holds every link between two ranks at once. It
        serialises, then pays the segment's latency; flows share each link and port max-min
        fairly, recomputed at every start and finish.
On a uniform full mesh (`topology.full_mesh`) both modes equal the closed form of model/costs.py.
A transfer takes the topology's route, or the schedule's own when meta["routes"] has one for
(src, dst, op, first chunk) (packed trees whose edges cross other devices: blink/packed.py).
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

import numpy as np

from collperf.errors import UsageError
from collperf.schedule.ir import REDUCE, Schedule
from collperf.topology import Topology


@dataclass
class LinkUse:
    link: str
    bytes: float
    capacity_Bps: float
    utilisation: float  # bytes / (capacity x total time)


@dataclass
class SimResult:
    mode: str
    size_bytes: float
    time_s: float
    step_start_s: np.ndarray
    step_end_s: np.ndarray
    links: list[LinkUse] = field(default_factory=list)  # busiest first

    def to_json(self, top: int = 10) -> dict:
        return {
            "mode": self.mode,
            "size_bytes": self.size_bytes,
            "time_s": self.time_s,
            "step_times_s": (self.step_end_s - self.step_start_s).tolist(),
            "busiest_links": [vars(u) for u in self.links[:top]],
        }


@dataclass
class _Compiled:
    """A schedule on a topology as flat arrays (one entry per transfer unless said otherwise)."""

    step: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    chunks: np.ndarray  # chunk count
    reduce: np.ndarray  # bool
    latency: np.ndarray  # route latency
    pair: np.ndarray  # index of the transfer's (src, dst) route in `segments`
    inc_t: np.ndarray  # incidence: transfer index ...
    inc_r: np.ndarray  # ... uses resource index
    segments: list  # per route: [(resource ids, latency)] from rank to rank
    capacity: np.ndarray  # per resource
    names: list  # per resource


def _compile(s: Schedule, topo: Topology) -> _Compiled:
    if topo.ranks < s.ranks:
        raise UsageError(f"the schedule needs {s.ranks} ranks but topology {topo.name} has {topo.ranks}")
    res_id: dict = {}
    capacity, names = [], []

    def resource(key, cap, name):
        if key not in res_id:
            res_id[key] = len(capacity)
            capacity.append(cap)
            names.append(name)
        return res_id[key]

    def route(src, dst, path=None):
        """The route as segments between ranks: a segment crosses switches cut-through (all its links
        at once) and ends at a rank, which stores and forwards. `path`: the schedule's own route."""
        segments, ids, latency = [], [resource(("out", src), topo.port_Bps(src), f"port {src} out")], 0.0
        for u, v in _explicit_hops(topo, src, dst, path) if path else topo.hops(src, dst):
            attrs = topo.link(u, v)
            if math.isfinite(attrs["bandwidth_Bps"]):
                ids.append(resource(("link", u, v), attrs["bandwidth_Bps"], f"{u}->{v}"))
            latency += attrs["latency_s"]
            if isinstance(v, int):  # a rank: the segment ends here
                if v == dst:
                    ids.append(resource(("in", dst), topo.port_Bps(dst), f"port {dst} in"))
                segments.append((ids, latency))
                ids, latency = [], 0.0
        return segments

    count = sum(len(st.transfers) for st in s.steps)
    flat = [t for st in s.steps for t in st.transfers]
    step = np.repeat(np.arange(len(s.steps)), [len(st.transfers) for st in s.steps])
    src = np.fromiter((t.src for t in flat), np.int64, count)
    dst = np.fromiter((t.dst for t in flat), np.int64, count)
    chunks = np.fromiter((len(t.chunks) for t in flat), float, count)
    reduce = np.fromiter((t.op == REDUCE for t in flat), bool, count)
    explicit = s.meta.get("routes")
    if explicit:  # per-transfer routes (packed trees): one route per distinct (src, dst, path)
        keys = [(t.src, t.dst, tuple(explicit.get((t.src, t.dst, t.op, t.chunks[0]), ()))) for t in flat]
        distinct: dict = {}
        pair = np.fromiter((distinct.setdefault(k, len(distinct)) for k in keys), np.int64, count)
        segments = [route(a, b, list(path)) for a, b, path in distinct]
    else:
        codes, pair = np.unique(src * s.ranks + dst, return_inverse=True)
        segments = [route(*divmod(int(code), s.ranks)) for code in codes]
    route_ids = [[r for ids, _ in segs for r in ids] for segs in segments]
    width = max((len(ids) for ids in route_ids), default=0)
    table = np.full((len(route_ids), width), -1, dtype=np.int64)
    for i, ids in enumerate(route_ids):
        table[i, : len(ids)] = ids
    route_latency = np.array([sum(lat for _, lat in segs) for segs in segments], dtype=float)
    per = table[pair] if count else np.zeros((0, width), dtype=np.int64)
    inc_t = np.repeat(np.arange(count), width)[per.ravel() >= 0]
    inc_r = per.ravel()[per.ravel() >= 0]
    return _Compiled(
        step,
        src,
        dst,
        chunks,
        reduce,
        route_latency[pair] if count else np.zeros(0),
        pair,
        inc_t,
        inc_r,
        segments,
        np.asarray(capacity, dtype=float),
        names,
    )


def _explicit_hops(topo: Topology, src: int, dst: int, path: list) -> list[tuple]:
    """The links of a schedule-given route; it must join src to dst over the topology's links."""
    if path[0] != src or path[-1] != dst or any(not topo.graph.has_edge(u, v) for u, v in zip(path[:-1], path[1:])):
        raise UsageError(f"route {path} of transfer {src}->{dst} is not a path of links in topology {topo.name}")
    return list(zip(path[:-1], path[1:]))


def simulate(
    s: Schedule, topo: Topology, size_bytes: float, mode: str = "rounds", reduce_bandwidth_Bps: float = math.inf
) -> SimResult:
    """Time of schedule `s` moving `size_bytes` (the nccl-tests size) on `topo`."""
    if mode not in ("rounds", "events"):
        raise UsageError(f"simulation mode {mode!r}: expected rounds or events")
    if size_bytes < 0:
        raise UsageError(f"size {size_bytes} is negative")
    c = _compile(s, topo)
    chunk_bytes = size_bytes / s.chunks_per_buffer
    gamma = 0.0 if math.isinf(reduce_bandwidth_Bps) else 1.0 / reduce_bandwidth_Bps
    run = _rounds if mode == "rounds" else _events
    time_s, start, end = run(s, c, chunk_bytes, gamma)
    return SimResult(mode, float(size_bytes), float(time_s), start, end, _link_use(c, chunk_bytes, time_s))


def _rounds(s: Schedule, c: _Compiled, chunk_bytes: float, gamma: float):
    steps, resources = len(s.steps), len(c.capacity)
    nbytes = c.chunks * chunk_bytes
    key = c.step[c.inc_t] * resources + c.inc_r
    load = np.bincount(key, weights=nbytes[c.inc_t], minlength=steps * resources)
    with np.errstate(divide="ignore", invalid="ignore"):
        busy = np.where(c.capacity[c.inc_r] > 0, load[key] / c.capacity[c.inc_r], 0.0)
    serial = np.zeros(len(c.step))
    np.maximum.at(serial, c.inc_t, busy)
    per_transfer = c.latency + serial
    step_time = np.zeros(steps)
    np.maximum.at(step_time, c.step, per_transfer)
    reduced = (
        np.bincount(
            c.step[c.reduce] * s.ranks + c.dst[c.reduce], weights=nbytes[c.reduce], minlength=steps * s.ranks
        ).reshape(steps, s.ranks)
        if steps
        else np.zeros((0, s.ranks))
    )
    step_time = step_time + (reduced.max(axis=1) if steps else 0.0) * gamma
    end = np.cumsum(step_time)
    return (float(end[-1]) if steps else 0.0), end - step_time, end


def _link_use(c: _Compiled, chunk_bytes: float, time_s: float) -> list[LinkUse]:
    if not len(c.capacity):
        return []
    total = np.bincount(c.inc_r, weights=(c.chunks * chunk_bytes)[c.inc_t], minlength=len(c.capacity))
    uses = [
        LinkUse(
            c.names[r],
            float(total[r]),
            float(c.capacity[r]),
            float(total[r] / (c.capacity[r] * time_s)) if time_s > 0 else 0.0,
        )
        for r in range(len(c.capacity))
        if not c.names[r].startswith("port")
    ]
    return sorted(uses, key=lambda u: (-u.utilisation, -u.bytes, u.link))


# --- event-driven, congestion-aware ------------------------------------------------------------


def _max_min_rates(flows: dict, capacity: np.ndarray) -> dict:
    """Max-min fair rates by progressive filling, vectorized: every round, the resources with the
    smallest fair share fix the rate of all their still-free flows (all ties at once)."""
    ids = list(flows)
    if not ids:
        return {}
    lengths = np.array([len(flows[f]) for f in ids])
    inc_f = np.repeat(np.arange(len(ids)), lengths)
    inc_r = np.fromiter((r for f in ids for r in flows[f]), np.int64, int(lengths.sum()))
    rate = np.full(len(ids), np.inf)
    free = lengths > 0
    left = capacity.astype(float).copy()
    while free.any():
        live = free[inc_f]
        users = np.bincount(inc_r[live], minlength=len(capacity))
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(users > 0, left / users, np.inf)
        smallest = share.min()
        bottleneck = share <= smallest * (1 + 1e-12)
        newly = np.zeros(len(ids), dtype=bool)
        newly[inc_f[live & bottleneck[inc_r]]] = True
        rate[newly] = smallest
        taken = newly[inc_f]
        left -= np.bincount(inc_r[taken], minlength=len(capacity)) * smallest
        free &= ~newly
    return dict(zip(ids, rate))


def _events(s: Schedule, c: _Compiled, chunk_bytes: float, gamma: float):
    n_steps = len(s.steps)
    by_rank_step: dict = {}
    for t in range(len(c.step)):
        for r in (int(c.src[t]), int(c.dst[t])):
            by_rank_step.setdefault((r, int(c.step[t])), []).append(t)
    rank_steps = {r: sorted(k for (rr, k) in by_rank_step if rr == r) for r in range(s.ranks)}
    position = {r: 0 for r in range(s.ranks)}  # index into rank_steps[r] of the current step
    reached = {r: 0.0 for r in range(s.ranks)}  # when the rank began its current step
    pending = {key: len(ts) for key, ts in by_rank_step.items()}
    reduced_bytes: dict = {}
    for t in np.nonzero(c.reduce)[0]:
        key = (int(c.dst[t]), int(c.step[t]))
        reduced_bytes[key] = reduced_bytes.get(key, 0.0) + c.chunks[t] * chunk_bytes
    step_start = np.full(n_steps, math.inf)
    step_end = np.zeros(n_steps)
    started = np.zeros(len(c.step), dtype=bool)
    timers: list = []  # (time, seq, kind, payload)
    seq = 0
    active: dict = {}  # flow id (transfer) -> [remaining bytes, hop index]
    now = 0.0

    def current(r):
        return rank_steps[r][position[r]] if position[r] < len(rank_steps[r]) else None

    def try_start(r):
        nonlocal seq
        k = current(r)
        if k is None:
            return
        for t in by_rank_step[(r, k)]:
            if started[t]:
                continue
            a, b = int(c.src[t]), int(c.dst[t])
            if current(a) == k and current(b) == k:
                started[t] = True
                begin = max(reached[a], reached[b])
                step_start[k] = min(step_start[k], begin)
                heapq.heappush(timers, (begin, seq, "hop", (t, 0)))
                seq += 1

    def finish_transfer(t, when):
        nonlocal seq
        k = int(c.step[t])
        step_end[k] = max(step_end[k], when)
        for r in {int(c.src[t]), int(c.dst[t])}:
            pending[(r, k)] -= 1
            if pending[(r, k)] == 0:
                done = when + reduced_bytes.get((r, k), 0.0) * gamma
                step_end[k] = max(step_end[k], done)
                heapq.heappush(timers, (done, seq, "advance", r))
                seq += 1

    for r in range(s.ranks):
        try_start(r)
    while timers or active:
        rates = (
            _max_min_rates({f: c.segments[c.pair[f]][hop][0] for f, (_, hop) in active.items()}, c.capacity)
            if active
            else {}
        )
        next_finish = min(
            (rem / rates[f] if rates[f] > 0 else math.inf for f, (rem, _) in active.items()), default=math.inf
        )
        next_timer = timers[0][0] - now if timers else math.inf
        dt = min(next_finish, next_timer)
        if math.isinf(dt):
            raise RuntimeError("event simulation stalled: a schedule step can never start")
        for f in active:
            active[f][0] -= rates[f] * dt if math.isfinite(rates[f]) else active[f][0]
        now += dt
        for f in [f for f, (rem, _) in active.items() if rem <= 1e-9 * max(1.0, chunk_bytes)]:
            _, hop = active.pop(f)
            heapq.heappush(timers, (now + c.segments[c.pair[f]][hop][1], seq, "arrive", (f, hop)))
            seq += 1
        while timers and timers[0][0] <= now + 1e-18:
            _, _, kind, payload = heapq.heappop(timers)
            if kind == "hop":
                t, hop = payload
                active[t] = [c.chunks[t] * chunk_bytes, hop]
            elif kind == "arrive":
                t, hop = payload
                if hop + 1 < len(c.segments[c.pair[t]]):
                    active[t] = [c.chunks[t] * chunk_bytes, hop + 1]
                else:
                    finish_transfer(t, now)
            else:
                r = payload
                position[r] += 1
                reached[r] = now
                nxt = current(r)
                if nxt is not None:
                    for t in by_rank_step[(r, nxt)]:
                        for peer in (int(c.src[t]), int(c.dst[t])):
                            try_start(peer)
    step_start = np.where(np.isfinite(step_start), step_start, 0.0)
    return float(step_end.max()) if n_steps else 0.0, step_start, step_end
