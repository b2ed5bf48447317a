"""The quick calibration every -A auto and user collective starts from: ping-pong links between two ranks
(inside a host and across hosts), the chapter's tiny-allreduce alpha and the local reduction rate.
`collperf calibrate` runs calibrate() as the job collperf.runtime.measure:calibrate.
"""

from __future__ import annotations

import statistics
import time

import torch
import torch.distributed as dist

from collperf.model.profile import bandwidth_from
from collperf.runtime.launch import device, sync


def pingpong(a: int, b: int, elements: int, iters: int, dev, group=None) -> float | None:
    """One-way time between (global) ranks a and b of `group` (p50 of round trips / 2); None on other ranks.
    Every rank of the group calls it (a barrier starts each round trip)."""
    rank = dist.get_rank()
    buf = torch.zeros(max(elements, 1), dtype=torch.float32, device=dev)
    samples = []
    for i in range(iters + 2):
        dist.barrier(group=group)
        if rank == a:
            t0 = time.perf_counter()
            dist.send(buf, b, group=group)
            dist.recv(buf, b, group=group)
            if i >= 2:
                samples.append((time.perf_counter() - t0) / 2)
        elif rank == b:
            dist.recv(buf, a, group=group)
            dist.send(buf, a, group=group)
    return statistics.median(samples) if samples else None


def link(a: int, b: int, big_elements: int, iters: int, dev, group=None) -> dict | None:
    """Latency (a small ping-pong) and bandwidth (a big one, less the latency) between ranks a and b; on
    rank a, None elsewhere. Used by calibrate here and by the user-facing collectives' auto (ops.py)."""
    small = pingpong(a, b, 2, iters * 4, dev, group)
    large = pingpong(a, b, big_elements, iters, dev, group)
    if small is None:
        return None
    return {
        "ranks": [a, b],
        "latency_s": small,
        "bytes": big_elements * 4,
        "time_s": large,
        "bandwidth_Bps": bandwidth_from(small, large, big_elements * 4),
    }


def calibrate(ranks_per_host: int, big_bytes: int = 16 << 20, iters: int = 5) -> dict:
    """alpha and bandwidth between two ranks of one host and of two hosts, the chapter's tiny-allreduce
    alpha, and the local reduction bandwidth; rank 0 returns them."""
    p, dev = dist.get_world_size(), device()
    big = big_bytes // 4
    out = {"ranks": p, "ranks_per_host": ranks_per_host}
    if ranks_per_host >= 2:
        out["intra"] = link(0, 1, big, iters, dev)
    if p > ranks_per_host:
        # the inter pair must come back to rank 0
        out["inter"] = link(0, ranks_per_host, big, iters, dev)
    tiny = torch.zeros(1, device=dev)
    for _ in range(5):
        dist.all_reduce(tiny)
    dist.barrier()
    t0 = time.perf_counter()
    for _ in range(50):
        dist.all_reduce(tiny)
    elapsed = (time.perf_counter() - t0) / 50
    out["allreduce_alpha_s"] = elapsed / max(1, 2 * (p - 1))  # the chapter's measure_alpha
    out["reduce_bandwidth_Bps"] = add_rate_Bps(big * 4, dev)
    return out


def add_rate_Bps(size_bytes: int, dev, iters: int = 5) -> float:
    """This rank's reduction rate: bytes of float32 added per second (add_ of two buffers of size_bytes)."""
    a, b = torch.ones(size_bytes // 4, device=dev), torch.ones(size_bytes // 4, device=dev)
    a.add_(b)
    sync(dev)
    t0 = time.perf_counter()
    for _ in range(iters):
        a.add_(b)
    sync(dev)
    return iters * size_bytes / max(time.perf_counter() - t0, 1e-9)
