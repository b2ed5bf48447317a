"""What -A auto measures besides the links: the backend's own collective at a few sizes (fitted alpha-beta,
model/auto/builtin_cost.py) and the cost of many concurrent TCP flows on one host link (model/shared_links.py).

Both are collective calls (every rank of the default group calls them) and are cached for the life of the
process per (backend, ranks, ranks per host, collective), like the quick link calibration of the user
collectives (runtime/ops.py), so that a sweep or a training loop pays for them once.
"""

from __future__ import annotations

import math
import statistics
import time

import numpy as np
import torch
import torch.distributed as dist

from collperf.collectives import get_collective
from collperf.model.auto.builtin_cost import BuiltinFit, fit_builtin
from collperf.model.network import Link
from collperf.model.shared_links import HostLinks
from collperf.runtime.builtin import run_builtin
from collperf.runtime.auto.calibration import pingpong
from collperf.runtime.launch import device

_FITS: dict[tuple, BuiltinFit] = {}
_FLOWS: dict[tuple, float] = {}
_EXCHANGES: dict[tuple, Link] = {}

FIT_MIN_BYTES = 64 << 10
FIT_MAX_BYTES = 16 << 20  # past this the time is linear in size on every backend we measured; it saves minutes


def fit_sizes(sweep_sizes, max_bytes: int = FIT_MAX_BYTES) -> list[int]:
    """Three sizes spanning the sweep (its smallest, its largest, their geometric middle), clipped to
    [FIT_MIN_BYTES, max_bytes]: the fit is used where it was measured."""
    lo = int(np.clip(min(sweep_sizes), FIT_MIN_BYTES, max_bytes))
    hi = int(np.clip(max(sweep_sizes), FIT_MIN_BYTES, max_bytes))
    if hi <= lo:
        lo, hi = max(FIT_MIN_BYTES, hi // 16), max(hi, 2 * FIT_MIN_BYTES)
    mid = int(np.sqrt(lo * hi)) // 4096 * 4096
    return sorted({lo, max(mid, lo + 4096), hi})


def group_key(group) -> tuple:
    """What names a process group in the caches: its backend, size and identity (the default group: WORLD)."""
    named = "WORLD" if group is None or group is dist.group.WORLD else id(group)
    return (dist.get_backend(group), dist.get_world_size(group), named)


def _key(collective: str, ranks_per_host: int, group=None) -> tuple:
    return (*group_key(group), ranks_per_host, collective)


def builtin_fit(
    collective: str,
    sweep_sizes,
    ranks_per_host: int,
    root: int = 0,
    iters: int = 3,
    max_bytes: int = FIT_MAX_BYTES,
    group=None,
    dev=None,
) -> BuiltinFit:
    """The built-in of `collective` on `group` (None: the default group; root a rank of it) timed at fit_sizes
    (float32 sum, out-of-place, after a barrier; the median over `iters` of the mean over ranks) and fitted;
    the same on every rank of the group."""
    key = _key(get_collective(collective).name, ranks_per_host, group)
    if key not in _FITS:
        coll, p, dev = get_collective(collective), dist.get_world_size(group), dev or device()
        sizes, times = fit_sizes(sweep_sizes, max_bytes), []
        for size in sizes:
            _, _, in_elems, out_elems = coll.counts(size, p, 4)
            inp = torch.ones(in_elems, dtype=torch.float32, device=dev)
            out = torch.zeros(out_elems, dtype=torch.float32, device=dev)
            run_builtin(coll, inp, out, "sum", root, group)  # warm-up: the backend's buffers and connections
            samples = []
            for _ in range(iters):
                dist.barrier(group=group)
                t0 = time.perf_counter()
                run_builtin(coll, inp, out, "sum", root, group)
                samples.append(time.perf_counter() - t0)
            mean = torch.tensor(samples, dtype=torch.float64)
            dist.all_reduce(mean, group=group)
            times.append(statistics.median((mean / p).tolist()))
        _FITS[key] = fit_builtin(coll.name, sizes, times)
    return _FITS[key]


def _send_to(peers: list[int], pieces: list[torch.Tensor]) -> float:
    t0 = time.perf_counter()
    for w in [dist.isend(piece, peer) for peer, piece in zip(peers, pieces)]:
        w.wait()
    return time.perf_counter() - t0


def flow_overhead(ranks_per_host: int, big_bytes: int = 4 << 20, iters: int = 3) -> float:
    """The extra time of each additional concurrent TCP flow leaving one host link, as a fraction of the link
    time: rank 0 sends `big_bytes` to one rank of another host, then the same bytes split among one rank of
    every other host at once; overhead = (t_split / t_one - 1) / (flows - 1), at least 0. 0 with fewer than 3
    hosts (no second flow to compare). The same on every rank."""
    p = dist.get_world_size()
    peers = list(range(ranks_per_host, p, ranks_per_host))
    if len(peers) < 2:
        return 0.0
    key = _key("flows", ranks_per_host)
    if key in _FLOWS:
        return _FLOWS[key]
    dev, rank = device(), dist.get_rank()
    whole = torch.zeros(big_bytes // 4, dtype=torch.float32, device=dev)
    split = list(torch.tensor_split(whole, len(peers)))
    one, many = [], []
    for i in range(iters + 1):
        for peers_now, pieces, samples in ((peers[:1], [whole], one), (peers, split, many)):
            dist.barrier()
            if rank == 0:
                t = _send_to(peers_now, pieces)
                if i:  # the first round opens the connections
                    samples.append(t)
            elif rank in peers_now:
                dist.recv(pieces[peers_now.index(rank)].clone(), 0)
    value = torch.zeros(1, dtype=torch.float64, device=dev)
    if rank == 0:
        ratio = statistics.median(many) / max(statistics.median(one), 1e-9)
        value[0] = max(0.0, (ratio - 1) / (len(peers) - 1))
    dist.broadcast(value, src=0)
    _FLOWS[key] = float(value.item())
    return _FLOWS[key]


def auto_extras(job, ranks_per_host: int) -> tuple[BuiltinFit | None, float]:
    """What -A auto measures besides the links, for a bench job (runtime/job.py): the built-in's fit and the
    per-flow overhead of the host links (several hosts only)."""
    fit = builtin_fit(job.collective, job.sizes, ranks_per_host, job.root)
    overhead = flow_overhead(ranks_per_host) if dist.get_world_size() > ranks_per_host else 0.0
    return fit, overhead


def auto_hosts(network, overhead: float) -> HostLinks | None:
    """The shared host links of a calibrated network of several hosts (None on one host)."""
    c = network.cluster
    if c is None or c.nodes < 2:
        return None
    return HostLinks.blocks(c.nodes, c.ranks_per_node, c.inter, overhead)


def auto_extras_text(fit: BuiltinFit | None, hosts: HostLinks | None) -> str:
    text = ""
    if fit is not None:
        text += f"; builtin {fit.latency_s * 1e6:.0f} us + {fit.seconds_per_byte * 1e9:.3f} ns/B"
    if hosts is not None:
        text += f"; host links shared, +{hosts.flow_overhead:.0%} per extra flow"
    return text


def exchange_link(
    sweep_sizes, ranks_per_host: int, iters: int = 3, max_bytes: int = FIT_MAX_BYTES, group=None, dev=None
) -> Link:
    """The per-step cost of our executor on this backend: every rank of `group` (None: the default group) sends
    n bytes to the rank one host on (r + ranks_per_host on several hosts, r + 1 on one) and receives as much,
    posted together (batch_isend_irecv, as runtime/execute.py posts a step), timed at fit_sizes and fitted
    alpha + n / bandwidth. A blocking ping-pong (calibration.link) misses what a batched exchange costs on
    gloo (its per-message work and both directions at once), and auto would price our schedules as faster
    than they run."""
    key = _key("exchange", ranks_per_host, group)
    if key not in _EXCHANGES:
        p, dev = dist.get_world_size(group), dev or device()
        rank = dist.get_rank(group) if group is not None else dist.get_rank()
        peer = (lambda r: dist.get_global_rank(group, r)) if group is not None else (lambda r: r)
        hop = ranks_per_host if p > ranks_per_host else 1
        sizes, times = fit_sizes(sweep_sizes, max_bytes), []
        for size in sizes:
            send = torch.ones(size // 4, dtype=torch.float32, device=dev)
            recv = torch.empty_like(send)
            samples = []
            for i in range(iters + 1):
                dist.barrier(group=group)
                t0 = time.perf_counter()
                ops = [
                    dist.P2POp(dist.isend, send, peer((rank + hop) % p), group),
                    dist.P2POp(dist.irecv, recv, peer((rank - hop) % p), group),
                ]
                for w in dist.batch_isend_irecv(ops):
                    w.wait()
                if i:  # the first round opens the connections
                    samples.append(time.perf_counter() - t0)
            mean = torch.tensor(samples, dtype=torch.float64)
            dist.all_reduce(mean, group=group)
            times.append(statistics.median((mean / p).tolist()))
        fit = fit_builtin("sendrecv", sizes, times)
        _EXCHANGES[key] = Link(
            fit.latency_s, 1 / fit.seconds_per_byte if fit.seconds_per_byte else math.inf, name="executor exchange"
        )
    return _EXCHANGES[key]


def with_exchange(raw: dict, link: Link, several_hosts: bool) -> dict:
    """The quick calibration's raw measurements (measure.calibrate) with the link our schedules cross (the
    inter-host one on several hosts, else the one inside the host) priced by the executor's exchange."""
    out = dict(raw)
    key = "inter" if several_hosts else "intra"
    # a step never costs less than the ping-pong's small message (a fit of a few sizes can put alpha at 0,
    # and pipelined algorithms would then be priced with a million segments)
    floor = (raw.get(key) or {}).get("latency_s", 0.0)
    out[key] = {"latency_s": max(link.latency_s, floor), "bandwidth_Bps": link.bandwidth_Bps}
    return out


def auto_inputs(collective: str, sweep_sizes, ranks_per_host: int) -> dict:
    """Everything -A auto measures besides the ping-pong links, as JSON (a collective call; rank 0's answer
    is the run's): the built-in's fit, the executor's exchange link and the per-flow overhead."""
    fit = builtin_fit(collective, sweep_sizes, ranks_per_host)
    link = exchange_link(sweep_sizes, ranks_per_host)
    several = dist.get_world_size() > ranks_per_host
    return {
        "builtin": fit.to_json(),
        "builtin_latency_s": fit.latency_s,
        "builtin_seconds_per_byte": fit.seconds_per_byte,
        "exchange_latency_s": link.latency_s,
        "exchange_bandwidth_Bps": link.bandwidth_Bps,
        "flow_overhead": flow_overhead(ranks_per_host) if several else 0.0,
    }


def step_link(sweep_sizes, ranks_per_host: int) -> Link:
    """What one step of our executor costs here (exchange_link), its alpha at least a small ping-pong's one-way
    time (a fit of three sizes can put alpha at 0, and pipelines would then be cut into every segment
    allowed); the same on every rank. What -A blink and the patterns choose their segments by on local ranks."""
    link = exchange_link(sweep_sizes, ranks_per_host)
    small = torch.zeros(1, dtype=torch.float64)
    one_way = pingpong(0, 1, 2, 12, device())
    if one_way is not None:
        small[0] = one_way
    dist.broadcast(small, src=0)
    return Link(max(link.latency_s, float(small.item())), link.bandwidth_Bps, name="executor step")
